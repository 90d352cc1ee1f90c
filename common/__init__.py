"""bpy helpers shared by every format's importer and exporter: fast mesh I/O, rollback, operator mixins."""
