"""Pure-Python codecs: bytes in, plain documents out, and back. No bpy here (numpy allowed)."""
