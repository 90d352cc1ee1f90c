"""Blender -> document: one module per format, each with its operators and menu entry."""
