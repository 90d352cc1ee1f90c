"""Document -> Blender: one module per format, each with its operator, FileHandlers and menu entry."""
