"""What differs between the Blender releases this extension supports, 4.2 LTS to 5.2 LTS, in one place.

Each difference below was found by running the test suite on every release (4.2.23, 4.3.0, 4.4.0, 4.5.15, 5.0.1,
5.1.2, 5.2.3). The rest of the extension calls these functions and never compares versions; features are detected
(an RNA property, a function parameter), so a new release is a change to this module only.

| difference | releases |
|---|---|
| F-curves live in an action's slots, layers, strips and channel bags (slotted actions) | 4.4+ |
| ... or in `Action.fcurves` (kept for the first slot on 4.4-4.5, removed in 5.0) | 4.2-4.3 |
| a new F-curve's group: `action_group=` on Action.fcurves.new | 4.2-4.3 |
| ... no group keyword on channel-bag fcurves.new: `channelbag.groups.new` then `fcurve.group` | 4.4-4.5 |
| ... `group_name=` on channel-bag fcurves.new | 5.0+ |
| Geometry Nodes modifier inputs and output attribute names as ID properties (`mod["Socket_2"]`) | 4.2-5.1 |
| ... as RNA under `mod.properties.inputs.Socket_2` (`type`, `attribute_name`) | 5.2+ |
| a new shape key's `value`: 0.0 | 4.2-4.5 |
| ... 1.0 (an import would show every shape at once): always set explicitly | 5.0+ |
| custom normals that are not unit length are ignored (mesh_io.set_custom_normals normalises them first) | 4.2 |
| `CollectionExport.filepath` (else `export_properties.filepath`) | 4.5+ |
| new materials have a node tree (`use_nodes` deprecated): `material_node_tree` turns nodes on where needed | 5.0+ |
| alpha blending: `Material.surface_render_method` (EEVEE Next), else `blend_method` | 4.2+ has the first |
| custom normals kept as the generic CORNER attribute `custom_normal` (an internal layer before) | 4.4+ |
| ID names hold 255 bytes (63 before); bone names hold 63 bytes on every release | 5.0+ |
| `Bone.select` removed (selection lives on pose bones) | 5.0+ |
| a path property says it accepts `//` (`PATH_SUPPORTS_BLEND_RELATIVE`), else 5.2 warns when one is set | 4.5+ |

Only the first six rows, the two material rows and the path row change what the extension's code does; the
others are listed because tests and scene dumps see them.
"""

from __future__ import annotations

from functools import cache

import bpy

# ------------------------------------------------------------------------------------------------ properties


def blend_relative_path_options() -> set[str]:
    """Options of a file path property that may start with `//` (the .blend file's folder): without the option
    4.5+ warn each time such a path is set; releases before 4.5 do not know it (nor warn)."""
    if "is_path_supports_blend_relative" in bpy.types.Property.bl_rna.properties:
        return {"PATH_SUPPORTS_BLEND_RELATIVE"}
    return set()


# ------------------------------------------------------------------------------------------------ actions


def has_slotted_actions() -> bool:
    """4.4+: an action's F-curves belong to slots and live in layers / strips / channel bags."""
    return "slots" in bpy.types.Action.bl_rna.properties


def new_action_channels(action: bpy.types.Action, owner: bpy.types.ID) -> tuple[object | None, object]:
    """(slot, F-curve owner) for keying `owner` with a new action: a new slot and its channel bag on 4.4+, else
    (None, the action itself). The F-curve owner's `fcurves` takes `new_fcurve`."""
    if not has_slotted_actions():
        return None, action
    slot = action.slots.new(id_type=owner.id_type, name=owner.name)
    strip = action.layers.new("Layer").strips.new(type="KEYFRAME")
    return slot, strip.channelbag(slot, ensure=True)


def new_fcurve(channels: object, data_path: str, index: int, group: str) -> bpy.types.FCurve:
    """A new F-curve in `channels` (an action on 4.2-4.3, a channel bag on 4.4+) inside the group `group`."""
    fcurves = channels.fcurves
    keyword = _fcurve_group_keyword(channels.bl_rna.identifier)
    if keyword is not None:
        return fcurves.new(data_path, index=index, **{keyword: group})
    curve = fcurves.new(data_path, index=index)
    groups = channels.groups
    curve.group = groups.get(group) or groups.new(group)
    return curve


@cache
def _fcurve_group_keyword(owner_type: str) -> str | None:
    """The group parameter of `<owner_type>.fcurves.new`, if it has one."""
    collection = getattr(bpy.types, owner_type).bl_rna.properties["fcurves"].srna
    parameters = collection.functions["new"].parameters
    return next((name for name in ("group_name", "action_group") if name in parameters), None)


def action_fcurves(action: bpy.types.Action, slot: object | None) -> list[bpy.types.FCurve]:
    """The F-curves of `action` that animate `slot` (4.4+; no slot: none), or all of them on 4.2-4.3."""
    if not has_slotted_actions():
        return list(action.fcurves)
    curves: list[bpy.types.FCurve] = []
    if slot is None:
        return curves
    for channelbag in slot_channelbags(action, slot):
        curves.extend(channelbag.fcurves)
    return curves


def slot_channelbags(action: bpy.types.Action, slot: object) -> list[object]:
    """The channel bags of the slot in every keyframe strip of the action (4.4+)."""
    bags = []
    for layer in action.layers:
        for strip in layer.strips:
            if strip.type == "KEYFRAME":
                bag = strip.channelbag(slot)
                if bag is not None:
                    bags.append(bag)
    return bags


def object_slots(action: bpy.types.Action) -> list[object]:
    """The action's slots for objects (4.4+); none on 4.2-4.3, where the action itself holds the F-curves."""
    if not has_slotted_actions():
        return []
    return [slot for slot in action.slots if slot.target_id_type in {"OBJECT", "UNSPECIFIED"}]


def assigned_slot(animation: bpy.types.AnimData | None) -> object | None:
    """The slot the animation data plays (4.4+), else None."""
    return getattr(animation, "action_slot", None) if animation is not None else None


def path_from_id(struct: bpy.types.bpy_struct) -> str:
    """The data path of `struct` from its ID. Blender 4.2 cannot give one for an object's AnimData (4.3+ says
    "animation_data"), which is where an ID keeps it."""
    try:
        path: str = struct.path_from_id()
    except ValueError:
        if isinstance(struct, bpy.types.AnimData):
            return "animation_data"
        raise
    return path


def playback_properties(animation: bpy.types.AnimData) -> list[str]:
    """The AnimData properties that choose what plays: action, its slot (4.4+) and whether the NLA plays."""
    return [name for name in ("action", "action_slot", "use_nla") if name in animation.bl_rna.properties]


# ------------------------------------------------------------------------------------------------ modifiers


def set_modifier_input_attribute(modifier: bpy.types.Modifier, socket: str, attribute: str) -> None:
    """Make a Geometry Nodes modifier read the input socket (its identifier, e.g. "Socket_2") from a named
    attribute or vertex group."""
    interface = _modifier_interface(modifier)
    if interface is None:
        modifier[f"{socket}_use_attribute"] = True
        modifier[f"{socket}_attribute_name"] = attribute
        return
    entry = getattr(interface.inputs, socket)
    entry.type = "ATTRIBUTE"
    entry.attribute_name = attribute


def set_modifier_output_attribute(modifier: bpy.types.Modifier, socket: str, attribute: str) -> None:
    """Make a Geometry Nodes modifier store the output field socket `socket` as the named attribute."""
    interface = _modifier_interface(modifier)
    if interface is None:
        modifier[f"{socket}_attribute_name"] = attribute
        return
    getattr(interface.outputs, socket).attribute_name = attribute


def _modifier_interface(modifier: bpy.types.Modifier) -> object | None:
    """5.2+: the modifier's node-group inputs and outputs as RNA (`properties.inputs` / `.outputs`)."""
    interface = getattr(modifier, "properties", None)
    return interface if hasattr(interface, "inputs") else None


# ------------------------------------------------------------------------------------------------ shape keys


def add_shape_key(obj: bpy.types.Object, name: str) -> bpy.types.ShapeKey:
    """A new shape key from the basis (not the mix) at value 0, so the object still looks as modelled: 5.0+ start
    new keys at 1.0, 4.x at 0.0."""
    key = obj.shape_key_add(name=name, from_mix=False)
    key.value = 0.0
    return key


# ------------------------------------------------------------------------------------------------ limits


def max_bone_name_bytes() -> int:
    """Bytes a bone name holds: 63 on every supported release."""
    return int(bpy.types.Bone.bl_rna.properties["name"].length_max) - 1


# ------------------------------------------------------------------------------------------------ materials


def material_node_tree(material: bpy.types.Material) -> bpy.types.NodeTree:
    """The material's node tree: new materials have one on 5.0+; before, nodes are turned on (`use_nodes`)."""
    if material.node_tree is None:  # (`use_nodes` is only read where it still matters: reading it warns on 5.0+)
        material.use_nodes = True
    tree: bpy.types.NodeTree = material.node_tree
    return tree


def blend_with_alpha(material: bpy.types.Material, masked: bool = False) -> None:
    """Draw the material blended by its alpha in the viewport and EEVEE; `masked`: each pixel drawn or not, as an
    alpha-tested texture is (dithered: no sorting of transparent faces)."""
    if hasattr(material, "surface_render_method"):
        material.surface_render_method = "DITHERED" if masked else "BLENDED"
    else:
        material.blend_method = "CLIP" if masked else "BLEND"
