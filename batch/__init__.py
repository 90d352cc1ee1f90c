"""Batch conversion for pipelines, without bpy: the record that lets a rerun skip what is up to date, the pool of
worker processes (each a Blender with this extension) that converts files side by side, the same tasks sent to a
Dask cluster, and the machine-readable report."""
