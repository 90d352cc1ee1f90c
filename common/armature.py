"""Armatures in and out of Blender: bones from names, parents and rest matrices; vertex weights in bulk.

Shared by the skeletal formats (SMD now, IQE later). A format's bones are rigid frames (rotation + translation)
in model space; Blender bones point along their local +Y. With `bone_axis` "Y" a Blender bone's frame *is* the
file's frame; "X" or "Z" turn each Blender bone so that it points along the file bone's +X or +Z (a display
choice that many Valve skeletons look better with). The choice is stored on the armature (BONE_AXIS_PROPERTY) so
that animation import and every export can undo it: file frame = Blender bone frame @ inverse(correction).

Matrices are numpy (..., 4, 4) arrays in row-major mathematical form (as `np.array(mathutils.Matrix)`).
"""

from __future__ import annotations

import contextlib
import math
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import bpy
import numpy as np
from mathutils import Matrix, Vector

from . import compat
from .mesh_io import original_name, remember_file_name

BONE_AXIS_PROPERTY = "iogf_bone_axis"
IQE_BONE_AXIS_PROPERTY = "iqe_bone_axis"  # the IQE importer's six axes (-X, -Y, -Z too), set when not +Y
AXIS_VECTORS = {"X": (1, 0, 0), "-X": (-1, 0, 0), "Y": (0, 1, 0), "-Y": (0, -1, 0), "Z": (0, 0, 1), "-Z": (0, 0, -1)}
FILE_ORDER = "iogf_file_order"  # bone property: the bone's index in the file it was imported from
BONE_AXES = (
    ("Y", "Y (as stored)", "Blender bones use the file's bone frames unchanged (bones point along local +Y)"),
    ("X", "X", "Turn Blender bones to point along the file bones' +X axis (typical of Valve skeletons)"),
    ("Z", "Z", "Turn Blender bones to point along the file bones' +Z axis"),
)
TEMPORARY_ATTRIBUTE = "__iogf_weights"

# ------------------------------------------------------------------------------------------------ rotation math


def euler_to_matrix(euler: np.ndarray, order: str = "XYZ") -> np.ndarray:
    """(..., 3) angles in radians to (..., 3, 3); order "XYZ" applies X first (R = Rz @ Ry @ Rx), as Blender."""
    euler = np.asarray(euler, np.float64)
    axes = {"X": 0, "Y": 1, "Z": 2}
    result = np.broadcast_to(np.identity(3), (*euler.shape[:-1], 3, 3)).copy()
    for letter in order:
        result = _axis_rotation(axes[letter], euler[..., axes[letter]]) @ result
    return result


def _axis_rotation(axis: int, angle: np.ndarray) -> np.ndarray:
    c, s = np.cos(angle), np.sin(angle)
    m = np.zeros((*angle.shape, 3, 3))
    i, j = [(1, 2), (2, 0), (0, 1)][axis]
    m[..., axis, axis] = 1.0
    m[..., i, i] = c
    m[..., j, j] = c
    m[..., i, j] = -s
    m[..., j, i] = s
    return m


def matrix_to_euler_xyz(m: np.ndarray) -> np.ndarray:
    """(..., 3, 3) rotations to (..., 3) Euler XYZ angles (the inverse of euler_to_matrix(..., "XYZ"))."""
    m = np.asarray(m, np.float64)
    cy = np.hypot(m[..., 0, 0], m[..., 1, 0])
    regular = cy > 1e-9
    x = np.where(regular, np.arctan2(m[..., 2, 1], m[..., 2, 2]), np.arctan2(-m[..., 1, 2], m[..., 1, 1]))
    y = np.arctan2(-m[..., 2, 0], cy)
    z = np.where(regular, np.arctan2(m[..., 1, 0], m[..., 0, 0]), 0.0)
    return np.stack([x, y, z], axis=-1)


def quaternion_to_matrix(q: np.ndarray) -> np.ndarray:
    """(..., 4) quaternions (w, x, y, z), normalised here, to (..., 3, 3)."""
    q = np.asarray(q, np.float64)
    length = np.linalg.norm(q, axis=-1, keepdims=True)
    q = np.where(length > 0, q / np.where(length > 0, length, 1), [1.0, 0.0, 0.0, 0.0])
    w, x, y, z = np.moveaxis(q, -1, 0)
    return np.stack(
        [
            np.stack([1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)], -1),
            np.stack([2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)], -1),
            np.stack([2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)], -1),
        ],
        -2,
    )


def matrix_to_quaternion(m: np.ndarray) -> np.ndarray:
    """(..., 3, 3) rotations to (..., 4) unit quaternions (w, x, y, z) with w >= 0."""
    m = np.asarray(m, np.float64)
    trace = m[..., 0, 0] + m[..., 1, 1] + m[..., 2, 2]
    candidates = np.stack(
        [
            np.stack([1 + trace, m[..., 2, 1] - m[..., 1, 2], m[..., 0, 2] - m[..., 2, 0],
                      m[..., 1, 0] - m[..., 0, 1]], -1),
            np.stack([m[..., 2, 1] - m[..., 1, 2], 1 + 2 * m[..., 0, 0] - trace, m[..., 0, 1] + m[..., 1, 0],
                      m[..., 0, 2] + m[..., 2, 0]], -1),
            np.stack([m[..., 0, 2] - m[..., 2, 0], m[..., 0, 1] + m[..., 1, 0], 1 + 2 * m[..., 1, 1] - trace,
                      m[..., 1, 2] + m[..., 2, 1]], -1),
            np.stack([m[..., 1, 0] - m[..., 0, 1], m[..., 0, 2] + m[..., 2, 0], m[..., 1, 2] + m[..., 2, 1],
                      1 + 2 * m[..., 2, 2] - trace], -1),
        ],
        -2,
    )  # fmt: skip
    diagonal = np.stack([trace, m[..., 0, 0], m[..., 1, 1], m[..., 2, 2]], -1)
    best = np.argmax(diagonal, axis=-1)
    q = np.take_along_axis(candidates, best[..., None, None], axis=-2)[..., 0, :]
    q /= np.linalg.norm(q, axis=-1, keepdims=True)
    return np.where(q[..., :1] < 0, -q, q)


def compose(translations: np.ndarray, rotations: np.ndarray, scales: np.ndarray | None = None) -> np.ndarray:
    """(..., 3) translations and (..., 3, 3) rotations (and optional (..., 3) scales) to (..., 4, 4)."""
    out = np.zeros((*rotations.shape[:-2], 4, 4))
    out[..., :3, :3] = rotations if scales is None else rotations * scales[..., None, :]
    out[..., :3, 3] = translations
    out[..., 3, 3] = 1.0
    return out


def rigid(matrices: np.ndarray) -> tuple[np.ndarray, bool]:
    """Scale removed from (..., 4, 4) matrices (columns normalised); also whether the scale was non-uniform."""
    out = np.array(matrices, np.float64)
    lengths = np.linalg.norm(out[..., :3, :3], axis=-2)
    uneven = bool(np.any(np.abs(lengths - lengths[..., :1]) > 1e-5 * np.maximum(lengths[..., :1], 1e-12)))
    out[..., :3, :3] /= np.where(lengths > 0, lengths, 1.0)[..., None, :]
    return out, uneven


def rigid_inverse(m: np.ndarray) -> np.ndarray:
    """Inverse of rigid (..., 4, 4) transforms."""
    out = np.zeros_like(m)
    rotation_t = np.swapaxes(m[..., :3, :3], -1, -2)
    out[..., :3, :3] = rotation_t
    out[..., :3, 3] = -(rotation_t @ m[..., :3, 3, None])[..., 0]
    out[..., 3, 3] = 1.0
    return out


def correction(axis: str) -> np.ndarray:
    """The 4x4 turn from a file bone frame to the Blender bone frame for `bone_axis`."""
    angle = {"Y": (2, 0.0), "X": (2, -np.pi / 2), "Z": (0, np.pi / 2)}[axis]
    out = np.identity(4)
    out[:3, :3] = np.rint(_axis_rotation(angle[0], np.array(angle[1])) * 1e12) / 1e12
    return out


# ------------------------------------------------------------------------------------------------ hierarchies


def bones_in_file_order(armature_object: bpy.types.Object) -> list[bpy.types.Bone]:
    """The bones in the order of the file they came from (engines refer to joints by index), bones added in Blender
    after them in the armature's order; a parent is moved before its children only where it was not already."""
    bones = list(armature_object.data.bones)
    count = len(bones)
    ranked = sorted(range(count), key=lambda i: (int(bones[i].get(FILE_ORDER, count)), i))
    bones = [bones[i] for i in ranked]
    index = {bone.name: row for row, bone in enumerate(bones)}
    parents = [index[bone.parent.name] if bone.parent is not None else -1 for bone in bones]
    return [bones[row] for row in topological_order(parents)]


def topological_order(parents: Sequence[int]) -> list[int]:
    """Rows ordered so that every parent comes before its children, otherwise keeping the given order."""
    done: set[int] = set()
    order: list[int] = []
    for start in range(len(parents)):
        chain = []
        row = start
        while row >= 0 and row not in done and row not in chain:
            chain.append(row)
            row = parents[row]
        for row in reversed(chain):
            done.add(row)
            order.append(row)
    return order


def world_from_local(parents: Sequence[int], local: np.ndarray) -> np.ndarray:
    """(..., B, 4, 4) parent-relative matrices to model space."""
    world = np.array(local, np.float64)
    for row in topological_order(parents):
        if parents[row] >= 0:
            world[..., row, :, :] = world[..., parents[row], :, :] @ local[..., row, :, :]
    return world


def local_from_world(parents: Sequence[int], world: np.ndarray) -> np.ndarray:
    """(..., B, 4, 4) rigid model-space matrices to parent-relative ones."""
    local = np.array(world, np.float64)
    rows = [row for row, parent in enumerate(parents) if parent >= 0]
    if rows:
        parent_rows = [parents[row] for row in rows]
        local[..., rows, :, :] = rigid_inverse(world[..., parent_rows, :, :]) @ world[..., rows, :, :]
    return local


# ------------------------------------------------------------------------------------------------ armatures


@dataclass
class Skeleton:
    """Bones of a model: names, parent rows (-1 = root) and rigid model-space rest matrices (B, 4, 4)."""

    names: list[str]
    parents: list[int]
    rest: np.ndarray

    def __len__(self) -> int:
        return len(self.names)


def bone_lengths(skeleton: Skeleton, model_size: float | None = None) -> np.ndarray:
    """A display length per bone: the mean distance to its children, else half its parent's, never tiny. Where
    the bones alone give no size (one bone, a static prop's), `model_size` (the mesh's extent) does."""
    heads = skeleton.rest[:, :3, 3] if len(skeleton) else np.zeros((0, 3))
    extent = float(np.ptp(heads, axis=0).max()) if len(heads) else 0.0
    if not extent > 0.0:
        extent = model_size if model_size is not None and math.isfinite(model_size) and model_size > 0 else 1.0
    floor = max(extent * 0.01, 1e-3)
    lengths = np.zeros(len(skeleton))
    counts = np.zeros(len(skeleton))
    for row, parent in enumerate(skeleton.parents):
        if parent >= 0:
            lengths[parent] += np.linalg.norm(heads[row] - heads[parent])
            counts[parent] += 1
    lengths = np.where(counts > 0, lengths / np.maximum(counts, 1), 0.0)
    for row in topological_order(skeleton.parents):
        if counts[row] == 0:
            parent = skeleton.parents[row]
            lengths[row] = lengths[parent] * 0.5 if parent >= 0 else max(extent * 0.05, floor)
    return np.maximum(lengths, floor)


def ensure_object_mode(context: bpy.types.Context) -> None:
    if context.mode != "OBJECT" and context.view_layer.objects.active is not None:
        bpy.ops.object.mode_set(mode="OBJECT")


def build_armature(
    context: bpy.types.Context,
    name: str,
    skeleton: Skeleton,
    *,
    bone_axis: str = "Y",
    axis_correction: np.ndarray | None = None,
    lengths: np.ndarray | None = None,
    sticks: bool = True,
) -> tuple[bpy.types.Object, list[str]]:
    """A new armature object (linked to the active collection) and the Blender name of each bone, in order.

    Blender limits bone names to 63 bytes and makes them unique, so callers map bones through the returned names.
    A format with its own bone-axis choices passes the 4x4 `axis_correction` (then `bone_axis` stays "Y") and may
    pass its own display `lengths`; `sticks` draws the bones as sticks in front of the mesh.
    """
    armature = bpy.data.armatures.new(name)
    armature[BONE_AXIS_PROPERTY] = bone_axis
    obj = bpy.data.objects.new(name, armature)
    if sticks:
        armature.display_type = "STICK"
        obj.show_in_front = True
    context.collection.objects.link(obj)
    names = list(skeleton.names)
    if not len(skeleton):
        return obj, names
    ensure_object_mode(context)
    blender_rest = skeleton.rest @ (correction(bone_axis) if axis_correction is None else axis_correction)
    lengths = bone_lengths(skeleton) if lengths is None else lengths
    view_layer = context.view_layer
    previous = view_layer.objects.active
    view_layer.objects.active = obj
    wanted = unique_bone_names(skeleton.names)  # (Blender's own search for a free name is slow on many repeats)
    bpy.ops.object.mode_set(mode="EDIT")
    try:
        edit_bones = armature.edit_bones
        created: dict[int, bpy.types.EditBone] = {}
        for row in topological_order(skeleton.parents):
            bone = edit_bones.new(wanted[row])
            bone.head = (0.0, 0.0, 0.0)
            bone.tail = (0.0, float(lengths[row]), 0.0)
            bone.matrix = Matrix(blender_rest[row].tolist())
            parent = skeleton.parents[row]
            if parent >= 0:
                bone.parent = created[parent]
            created[row] = bone
            names[row] = bone.name
    finally:
        bpy.ops.object.mode_set(mode="OBJECT")
        view_layer.objects.active = previous
    bones = {bone.name: bone for bone in armature.bones}  # (one pass: a lookup by name walks the collection)
    for row, bone_name in enumerate(names):
        bones[bone_name][FILE_ORDER] = row
        if bone_name != skeleton.names[row]:  # too long, or cut to a name already taken: the file's is kept
            remember_file_name(bones[bone_name], skeleton.names[row])
    return obj, names


_NUMBERED_NAME = re.compile(r"(.*)\.([0-9]{3,})")


def unique_bone_names(names: Sequence[str]) -> list[str]:
    """The names Blender gives bones made in this order: a name taken gets the first free number after its own
    (`bone` -> `bone.001`, `bone.007` -> `bone.008`). Names that need cutting to fit are left to Blender."""
    limit = compat.max_bone_name_bytes()
    taken: set[str] = set()
    next_number: dict[tuple[str, int], int] = {}  # (base, first number tried) -> where the search got to
    result = []
    for name in names:
        if len(name.encode()) > limit - 4:  # (room for a number: Blender cuts such names itself)
            result.append(name)
            continue
        unique = name
        if unique in taken:
            numbered = _NUMBERED_NAME.fullmatch(name)
            base, start = (numbered.group(1), int(numbered.group(2)) + 1) if numbered else (name, 1)
            number = next_number.get((base, start), start)  # (numbers are only ever taken: the search goes on)
            while f"{base}.{number:03d}" in taken:
                number += 1
            unique = f"{base}.{number:03d}"
            next_number[(base, start)] = number + 1
        taken.add(unique)
        result.append(unique)
    return result


def file_name_of(bone: bpy.types.Bone) -> str:
    """The bone's name in the file it was imported from (Blender may have had to shorten it), while it keeps the
    name Blender gave it: a bone renamed since (or a copy of it) goes by its own name."""
    return original_name(bone)


def has_file_name(bone: bpy.types.Bone) -> bool:
    """Whether the bone keeps a file name Blender could not give it (see file_name_of)."""
    return file_name_of(bone) != bone.name


def bone_axis_of(armature_object: bpy.types.Object) -> str:
    axis = armature_object.data.get(BONE_AXIS_PROPERTY, "Y")
    return axis if axis in ("X", "Y", "Z") else "Y"


def signed_axis_correction(axis: str) -> np.ndarray:
    """4x4 C with R = B * C: Blender's bone Y axis laid onto the file's joint axis, any of six (IQE's choices)."""
    rotation = Vector((0.0, 1.0, 0.0)).rotation_difference(Vector(AXIS_VECTORS.get(axis, (0, 1, 0))))
    return np.array(rotation.to_matrix().to_4x4(), np.float64)


def joint_turn(armature_object: bpy.types.Object) -> np.ndarray:
    """The turn C from a file's joint frame to this armature's bone frames (rest = joint frame @ C), whichever
    importer made it: the IQE importer's six axes first, else the SMD importer's three. An animation of another
    format plays on it, and any export writes its joints back, in the frames the files had."""
    iqe_axis = armature_object.data.get(IQE_BONE_AXIS_PROPERTY)
    if iqe_axis is not None:
        return signed_axis_correction(str(iqe_axis))
    return correction(bone_axis_of(armature_object))


def read_skeleton(armature_object: bpy.types.Object) -> Skeleton:
    """An armature's bones in topological order, with rest frames in armature space (bone-axis correction undone).
    Scale in bone matrices is removed."""
    bones = bones_in_file_order(armature_object)
    index = {bone.name: row for row, bone in enumerate(bones)}
    names = [bone.name for bone in bones]
    new_parents = [index[bone.parent.name] if bone.parent is not None else -1 for bone in bones]
    rest = np.array([np.array(bone.matrix_local) for bone in bones]).reshape(-1, 4, 4)
    rest, _ = rigid(rest @ np.linalg.inv(joint_turn(armature_object)))
    return Skeleton(names, new_parents, rest)


# ------------------------------------------------------------------------------------------------ skinning


def add_vertex_weights(
    context: bpy.types.Context,
    obj: bpy.types.Object,
    group_names: Sequence[str],
    vertices: np.ndarray,
    groups: np.ndarray,
    weights: np.ndarray,
) -> None:
    """Vertex groups from (vertex, group row, weight) triples, in bulk: a group whose weights take few values
    gets one VertexGroup.add per value; any other is written as a float attribute and converted in C."""
    mesh = obj.data
    if _one_group_one_weight(obj, group_names, vertices, groups, weights):
        return
    vertex_count = len(mesh.vertices)
    order = np.lexsort((vertices, groups))
    vertices, groups, weights = vertices[order], groups[order], weights[order].astype(np.float32)
    bounds = np.searchsorted(groups, np.arange(len(group_names) + 1))
    for row, name in enumerate(group_names):
        start, stop = int(bounds[row]), int(bounds[row + 1])
        if start == stop:
            continue
        group_vertices, group_weights = vertices[start:stop], weights[start:stop]
        values, inverse = np.unique(group_weights, return_inverse=True)
        if len(values) <= 8:
            group = obj.vertex_groups.new(name=name)
            for value_row, value in enumerate(values.tolist()):
                group.add(group_vertices[inverse == value_row].tolist(), value, "REPLACE")
            continue
        dense = np.zeros(vertex_count, np.float32)
        dense[group_vertices] = group_weights
        attribute = mesh.attributes.new(TEMPORARY_ATTRIBUTE, "FLOAT", "POINT")
        attribute.data.foreach_set("value", dense)
        mesh.attributes.active = attribute
        with context.temp_override(object=obj, active_object=obj):
            bpy.ops.geometry.attribute_convert(mode="VERTEX_GROUP")
        obj.vertex_groups[-1].name = name
        zero = group_vertices[group_weights <= 0]
        if zero.size:  # a weight of exactly 0 is still a member in the file; keep it so
            obj.vertex_groups[-1].add(zero.tolist(), 0.0, "REPLACE")
        leftover = mesh.attributes.get(TEMPORARY_ATTRIBUTE)
        if leftover is not None:
            mesh.attributes.remove(leftover)


def _one_group_one_weight(
    obj: bpy.types.Object, group_names: Sequence[str], vertices: np.ndarray, groups: np.ndarray, weights: np.ndarray
) -> bool:
    """add_vertex_weights of links that all name one group with one weight (a rigid mesh of one bone, as a QC's
    small parts are), without sorting them: the group and its one VertexGroup.add, as the general way makes them
    (the order in which one add lists the vertices changes nothing). False, with nothing done, otherwise."""
    if not len(groups) or int(groups.min()) != int(groups.max()):
        return False
    values = weights.astype(np.float32)
    if float(values.min()) != float(values.max()):
        return False
    group = obj.vertex_groups.new(name=group_names[int(groups[0])])
    group.add(vertices.tolist(), float(values[0]), "REPLACE")
    return True


def skin_to_armature(obj: bpy.types.Object, armature_object: bpy.types.Object) -> None:
    """Parent a mesh object to an armature and deform it with an Armature modifier."""
    obj.parent = armature_object
    modifier = obj.modifiers.new("Armature", "ARMATURE")
    modifier.object = armature_object


@contextlib.contextmanager
def bone_children_at_rest(context: bpy.types.Context, objects: Sequence[bpy.types.Object]) -> Iterator[None]:
    """Objects parented to a bone (a hat on the head bone), directly or through their parents, placed as at the
    rest pose while evaluated: their armatures switched to Rest Position, then back. A reference mesh is the
    bind pose, whatever frame the scene shows."""
    armatures = []
    for obj in objects:
        child = obj
        while child.parent is not None:
            if child.parent_type == "BONE" and child.parent.type == "ARMATURE" and child.parent not in armatures:
                armatures.append(child.parent)
            child = child.parent
    changed = [armature for armature in armatures if armature.data.pose_position != "REST"]
    for armature in changed:
        armature.data.pose_position = "REST"
    if changed:
        context.view_layer.update()
    try:
        yield
    finally:
        for armature in changed:
            armature.data.pose_position = "POSE"
        if changed:
            context.view_layer.update()


def armature_of(obj: bpy.types.Object) -> bpy.types.Object | None:
    """The armature deforming a mesh object: its first enabled Armature modifier's object, else an armature parent."""
    for modifier in obj.modifiers:
        if modifier.type == "ARMATURE" and modifier.object is not None and modifier.show_viewport:
            return modifier.object
    parent = obj.parent
    return parent if parent is not None and parent.type == "ARMATURE" else None


class _WeightReader:
    """A temporary Geometry Nodes modifier that copies vertex groups into float attributes `__iogf_w<i>`, so an
    evaluated mesh yields every weight through foreach_get (Python has no bulk getter for vertex groups).

    The node group only passes float fields from its inputs to its outputs; the modifier reads each input from a
    vertex group and stores each output as an attribute (two nodes and a link per group: quick to build)."""

    def __init__(self, obj: bpy.types.Object, group_names: Sequence[str]) -> None:
        tree = bpy.data.node_groups.new("__iogf_weights", "GeometryNodeTree")
        interface = tree.interface
        interface.new_socket("Geometry", in_out="INPUT", socket_type="NodeSocketGeometry")
        interface.new_socket("Geometry", in_out="OUTPUT", socket_type="NodeSocketGeometry")
        sockets = []
        for row in range(len(group_names)):
            field_in = interface.new_socket(f"w{row}", in_out="INPUT", socket_type="NodeSocketFloat")
            field_out = interface.new_socket(f"w{row}", in_out="OUTPUT", socket_type="NodeSocketFloat")
            if field_out.attribute_domain != "POINT":
                field_out.attribute_domain = "POINT"
            sockets.append((field_in.identifier, field_out.identifier))
        group_input, group_output = tree.nodes.new("NodeGroupInput"), tree.nodes.new("NodeGroupOutput")
        for output, input_ in zip(group_input.outputs[:-1], group_output.inputs[:-1], strict=True):  # (-1: virtual)
            tree.links.new(output, input_, verify_limits=False)
        self.tree = tree
        self.modifier = obj.modifiers.new("__iogf_weights", "NODES")
        self.modifier.node_group = tree
        for row, (name, (field_in, field_out)) in enumerate(zip(group_names, sockets, strict=True)):
            compat.set_modifier_input_attribute(self.modifier, field_in, name)
            compat.set_modifier_output_attribute(self.modifier, field_out, f"__iogf_w{row}")
        self.obj = obj
        self.count = len(group_names)

    def read(self, mesh: bpy.types.Mesh) -> np.ndarray:
        """(V, G) weights of the evaluated mesh."""
        weights = np.zeros((self.count, len(mesh.vertices)), np.float32)
        for row in range(self.count):
            mesh.attributes[f"__iogf_w{row}"].data.foreach_get("value", weights[row])
        return weights.T

    def remove(self) -> None:
        self.obj.modifiers.remove(self.modifier)
        bpy.data.node_groups.remove(self.tree)


def vertex_weight_reader(obj: bpy.types.Object, group_names: Sequence[str]) -> _WeightReader:
    """Add the weight-reading modifier last on `obj`; call .read(evaluated mesh), then .remove()."""
    return _WeightReader(obj, group_names)
