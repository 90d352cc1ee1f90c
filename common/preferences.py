"""The extension's preferences (Edit > Preferences > Add-ons > Game Formats): the studiomdl an SMD export's
*Compile* runs, and the game folder its model goes into."""

from __future__ import annotations

import bpy
from bpy.props import StringProperty

EXTENSION_PACKAGE = __package__.rpartition(".")[0]  # (bl_ext.<repo>.io_game_formats: what Blender names it by)


class IOGF_preferences(bpy.types.AddonPreferences):
    bl_idname = EXTENSION_PACKAGE

    studiomdl_path: StringProperty(
        name="studiomdl", subtype="FILE_PATH", default="",
        description="The studiomdl that compiles an exported QC (GoldSrc's or Source's; a Windows .exe runs "
        "through Wine on Linux and macOS)",
    )  # fmt: skip
    game_folder: StringProperty(
        name="Game Folder", subtype="DIR_PATH", default="",
        description="The game's folder (Source: the one holding gameinfo.txt, given to studiomdl as -game; GoldSrc: "
        "e.g. Half-Life/valve): the compiled model goes into its models/ folder. Empty: GoldSrc's model stays "
        "beside the QC, Source's studiomdl uses VPROJECT",
    )  # fmt: skip

    def draw(self, context: bpy.types.Context) -> None:
        layout = self.layout
        layout.use_property_split = True
        layout.prop(self, "studiomdl_path")
        layout.prop(self, "game_folder")


def preferences(context: bpy.types.Context) -> IOGF_preferences | None:
    """The extension's preferences, None while it is not enabled as an add-on (a script loading its modules)."""
    addon = context.preferences.addons.get(EXTENSION_PACKAGE)
    return addon.preferences if addon is not None else None


classes = (IOGF_preferences,)
