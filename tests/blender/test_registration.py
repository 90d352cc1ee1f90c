"""The extension registers, unregisters and re-registers cleanly, and its UI code draws real properties."""

from __future__ import annotations

from types import ModuleType, SimpleNamespace

import addon_utils
import bpy
import pytest

MODULE = "bl_ext.dev.io_game_formats"
OPERATORS = (
    "IMPORT_SCENE_OT_joe",
    "EXPORT_SCENE_OT_joe",
    "EXPORT_SCENE_OT_jpk",
    "IMPORT_SCENE_OT_iqe",
    "EXPORT_SCENE_OT_iqe",
    "IMPORT_SCENE_OT_iqm",
    "EXPORT_SCENE_OT_iqm",
    "IMPORT_SCENE_OT_valve_smd",
    "EXPORT_SCENE_OT_valve_smd",
    "IMPORT_SCENE_OT_qmap_tmp",
    "EXPORT_SCENE_OT_qmap_tmp",
    "IMPORT_SCENE_OT_qmap",
    "EXPORT_SCENE_OT_qmap",
    "QMAP_OT_export_source",
    "QMAP_OT_compile",
    "QMAP_OT_export_and_compile",
    "QMAP_OT_show_octrees",
    "QMAP_OT_hide_octrees",
    "QMAP_OT_import_desc",
    "QMAP_OT_register_map",
    "QMAP_OT_copy_resource_line",
    "VIEW3D_PT_qmap",
    "IMPORT_SCENE_OT_vdrift_car",
    "EXPORT_SCENE_OT_vdrift_car",
)
FILE_HANDLERS = ("IOGF_FH_joe", "IOGF_FH_jpk", "IOGF_FH_iqe", "IOGF_FH_iqm", "IOGF_FH_smd", "IOGF_FH_qmap_tmp",
                 "IOGF_FH_qmap", "IOGF_FH_vdrift_car")  # fmt: skip
FILE_OPERATORS = [
    f"{name.split('_OT_')[0].lower()}.{name.split('_OT_')[1]}"
    for name in OPERATORS
    if name.startswith(("IMPORT", "EXPORT"))
]


def our_menu_entries(menu: type) -> int:
    return sum(f.__module__.startswith(MODULE) for f in menu._dyn_ui_initialize())


def registered(extension: ModuleType) -> dict[str, object]:
    return {
        "operators": [hasattr(bpy.types, name) for name in OPERATORS],
        "handlers": [hasattr(bpy.types, name) for name in FILE_HANDLERS],
        "import_menu": our_menu_entries(bpy.types.TOPBAR_MT_file_import),
        "export_menu": our_menu_entries(bpy.types.TOPBAR_MT_file_export),
        "cli": extension._cli_handle is not None,
        "properties": [hasattr(bpy.types.Scene, "qmap"), hasattr(bpy.types.Material, "qmap")],
    }


def test_disable_and_enable_twice(extension: ModuleType) -> None:
    menus = (
        sum(hasattr(m, "menu_import") for m in extension.FORMAT_MODULES),
        sum(hasattr(m, "menu_export") for m in extension.FORMAT_MODULES),
    )
    on = {"operators": [True] * len(OPERATORS), "handlers": [True] * len(FILE_HANDLERS), "import_menu": menus[0],
          "export_menu": menus[1], "cli": True, "properties": [True, True]}  # fmt: skip
    off = {"operators": [False] * len(OPERATORS), "handlers": [False] * len(FILE_HANDLERS), "import_menu": 0,
           "export_menu": 0, "cli": False, "properties": [False, False]}  # fmt: skip
    assert registered(extension) == on
    for _ in range(2):
        addon_utils.disable(MODULE, default_set=True)
        assert registered(extension) == off
        with pytest.raises(AttributeError, match="could not be found"):
            bpy.ops.import_scene.joe(filepath="x.joe")
        addon_utils.enable(MODULE, default_set=True)
        assert registered(extension) == on


def test_file_handlers_accept_drops_only_in_the_viewport_and_outliner() -> None:
    handler = bpy.types.IOGF_FH_joe
    viewport = SimpleNamespace(area=SimpleNamespace(type="VIEW_3D"), space_data=SimpleNamespace(type="VIEW_3D"))
    assert handler.poll_drop(viewport)
    assert not handler.poll_drop(SimpleNamespace(area=None))
    assert not handler.poll_drop(SimpleNamespace(area=SimpleNamespace(type="IMAGE_EDITOR")))
    assert bpy.types.IOGF_FH_jpk.bl_file_extensions == ".jpk"


def test_the_smd_exporter_label_names_only_what_it_writes() -> None:
    handler = bpy.types.IOGF_FH_smd
    assert handler.bl_label == "Valve SMD/VTA"  # the Collection Exporter's name: QC cannot be exported
    assert ".qc" in handler.bl_file_extensions.split(";")  # a dropped QC still reaches the importer
    assert "QC" in bpy.types.IMPORT_SCENE_OT_valve_smd.bl_label


def our_operators_and_settings(extension: ModuleType) -> list[tuple[str, bpy.types.Struct]]:
    """(name, RNA) of every operator the add-on registers, and of the settings its QMAP panel draws."""
    found = []
    for module in extension.FORMAT_MODULES:
        for cls in module.classes:
            if issubclass(cls, bpy.types.Operator):
                group, name = cls.bl_idname.split(".")
                found.append((cls.bl_idname, getattr(getattr(bpy.ops, group), name).get_rna_type()))
            elif cls.__name__ in ("QmapSceneSettings", "QmapMaterialSettings"):
                found.append((cls.__name__, cls.bl_rna))
    return found


INTERNAL_PROPERTIES = {"rna_type", "filepath", "directory", "files", "filter_glob", "check_existing", "report"}


def test_every_option_has_a_tooltip(extension: ModuleType) -> None:
    found = our_operators_and_settings(extension)
    assert len([name for name, _ in found if "." in name]) == len(OPERATORS) - 1  # every operator (not the panel)
    shown = [(name, prop) for name, rna in found for prop in rna.properties
             if prop.identifier not in INTERNAL_PROPERTIES and not prop.is_hidden]  # fmt: skip
    assert [f"{name}.{prop.identifier}" for name, prop in shown if not prop.description.strip()] == []


def test_presets_leave_the_file_paths_out(extension: ModuleType) -> None:
    """A preset saved from the file browser must not carry the file it was saved with (Blender's OBJ exporter
    neither), nor an import's folder and files."""
    carried = [f"{name}.{prop.identifier}" for name, rna in our_operators_and_settings(extension) if "." in name
               for prop in rna.properties
               if prop.identifier in ("filepath", "directory", "files") and not prop.is_skip_preset]  # fmt: skip
    assert carried == []


def test_a_drop_runs_the_importer_through_invoke(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from tests.joe_fixtures import cube_bytes

    path = tmp_path / "dropped.joe"
    path.write_bytes(cube_bytes())
    result = bpy.ops.import_scene.joe(
        "INVOKE_DEFAULT", filepath=str(path), directory=str(tmp_path), files=[{"name": path.name}]
    )
    assert result == {"FINISHED"} and "dropped" in bpy.data.objects


@pytest.mark.parametrize("name", [name for name in OPERATORS if name.startswith("IMPORT_SCENE_OT_")])
def test_a_drop_shows_the_import_options_rather_than_the_file_browser(extension: ModuleType, name: str) -> None:
    """ImportHelper.invoke opens the file browser; the add-on's own invoke (a drop: the options popup) must come
    first in every importer's bases (headless Blender runs execute instead of invoke, so the order is checked)."""
    from bpy_extras.io_utils import ImportHelper

    mixin = extension.common.operators.ImportFilesMixin
    cls = getattr(bpy.types, name)
    providers = [klass for klass in cls.__mro__ if "invoke" in vars(klass)]
    assert mixin in providers and ImportHelper in providers
    assert providers.index(mixin) < providers.index(ImportHelper), providers


class FakeLayout:
    """Records what draw() code asks for, and the panels drawn closed; panels are always open."""

    def __init__(self, drawn: list[str], closed: list[str] | None = None) -> None:
        self.drawn = drawn
        self.closed = closed if closed is not None else []
        self.use_property_split = False
        self.use_property_decorate = True

    def panel(self, idname: str, default_closed: bool = False) -> tuple[FakeLayout, FakeLayout]:
        if default_closed:
            self.closed.append(idname)
        return FakeLayout(self.drawn, self.closed), FakeLayout(self.drawn, self.closed)

    def label(self, text: str = "") -> None:
        pass

    def prop(self, data: object, name: str, **_: object) -> None:
        self.drawn.append(name)


@pytest.mark.parametrize("idname", FILE_OPERATORS)
@pytest.mark.parametrize("space", ["FILE_BROWSER", "PROPERTIES"])
def test_draw_functions_only_draw_real_properties(idname: str, space: str) -> None:
    module, name = idname.split(".")
    rna = getattr(getattr(bpy.ops, module), name).get_rna_type()
    operator_class = getattr(bpy.types, f"{module.upper()}_OT_{name}")
    if not hasattr(operator_class, "draw"):  # Blender's default drawing: only when there is nothing to arrange
        hidden = {p.identifier for p in rna.properties if p.is_hidden} | {"rna_type", "filepath", "check_existing"}
        assert set(rna.properties.keys()) <= hidden
        return
    drawn: list[str] = []
    fake_self = SimpleNamespace(layout=FakeLayout(drawn))
    operator_class.draw(fake_self, SimpleNamespace(space_data=SimpleNamespace(type=space)))
    assert drawn
    assert not [panel for panel in fake_self.layout.closed if "transform" in panel]  # (open, as Blender's exporters)
    assert set(drawn) <= set(rna.properties.keys())
    if idname.startswith("export"):
        assert ("export_selected_objects" in drawn) == (space == "FILE_BROWSER")  # hidden for Collection Exporters
