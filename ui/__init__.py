"""Panels and their operators: the QMAP sidebar."""
