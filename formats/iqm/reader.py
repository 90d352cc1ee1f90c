"""Read IQM into the IqeDocument model shared with IQE, so everything that imports IQE imports IQM.

Vertex arrays become the document's attributes (integers decoded to floats that re-encode to the same values),
and any format other than the compiler's default becomes a `vertexarray` declaration, so writing the document
as IQE and compiling it gives the same formats back. Custom arrays take slots 0..9 in file order ("customN"
keeps slot N when it can). Animation frames are decoded as engines decode them (offset + value * scale).
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import numpy.typing as npt

from ..errors import FileBuffer, FormatError, Warnings
from ..iqe.document import (
    MAX_INFLUENCES,
    NUMBERED_JOINTS_NOTE,
    IqeAnimation,
    IqeDocument,
    IqeEvent,
    IqeJoint,
    IqeMesh,
    IqeVertexArrayFormat,
)
from ..rows import zeroed_non_finite
from .components import decode
from .decode import decode_model
from .extensions import event_frame
from .framegroups import FrameGroup, clamped
from .layout import CUSTOM_DEFAULT, DEFAULT_FORMATS, LOOP_FLAG, IqmModel, IqmVertexArray

FloatArray = npt.NDArray[np.float32]
_CUSTOM_NAME = re.compile(r"custom([0-9])")
_SLOTS = 10


def read_iqm_model(data: FileBuffer, path: str | None = None, warnings: Warnings | None = None) -> IqmModel:
    """The file's sections, checked (FormatError with the byte offset of the bad field)."""
    try:
        return decode_model(data, warnings if warnings is not None else Warnings())
    except FormatError as error:
        raise (error.with_path(path) if path else error) from None


def read_iqm(data: FileBuffer, path: str | None = None, framegroups: list[FrameGroup] | None = None) -> IqeDocument:
    """Parse IQM bytes into a document (the file's coordinates, winding and V, as IQE keeps them); with
    `framegroups`, the animations are those groups of the file's frames (as DarkPlaces plays them)."""
    warnings = Warnings()
    model = read_iqm_model(data, path, warnings)
    try:
        return document_from_model(model, warnings, framegroups)
    except FormatError as error:
        raise (error.with_path(path) if path else error) from None


def document_from_model(
    model: IqmModel, warnings: Warnings | None = None, framegroups: list[FrameGroup] | None = None
) -> IqeDocument:
    document = IqeDocument(warnings=warnings if warnings is not None else Warnings())
    attributes = _Attributes(model, document)
    fte_meshes, fte_skins = model.extensions.fte_meshes, model.extensions.fte_skins
    for index, mesh in enumerate(model.meshes):
        document.meshes.append(attributes.mesh(index))
        document.meshes[-1].fte = fte_meshes[index] if fte_meshes is not None else None
        document.meshes[-1].skins = list(fte_skins[index]) if fte_skins is not None else []
        if not mesh.triangle_count:
            document.warnings.add(f"mesh {mesh.name!r} has no triangles")
    document.joints = [
        IqeJoint(name, int(parent), _triple(pose[0:3]), _quaternion(pose[3:7]), _triple(pose[7:10]))
        for name, parent, pose in zip(model.joint_names, model.joint_parents.tolist(),
                                      model.joint_poses.astype(np.float64), strict=True)
    ]  # fmt: skip
    document.animations = _animations(model, document)
    for event in model.extensions.fte_events:
        document.animations[event.anim].events.append(IqeEvent(event.time, event.code, event.data))
    if framegroups is not None and document.animations:
        document.animations = _grouped_animations(model, document, framegroups)
    if not document.joints and document.animations and model.pose_parents.shape[0]:
        document.joints = _joints_of_poses(model, document)
    if model.comment is not None:
        try:
            document.comment_section = model.comment.decode("utf-8")
        except UnicodeDecodeError:
            document.comment_section = model.comment.decode("latin-1")
    return document


def _triple(values: npt.NDArray[np.float64]) -> tuple[float, float, float]:
    return float(values[0]), float(values[1]), float(values[2])


def _quaternion(values: npt.NDArray[np.float64]) -> tuple[float, float, float, float]:
    sign = -1.0 if values[3] > 0.0 else 1.0  # the document keeps w <= 0, as IQE does
    x, y, z, w = (float(sign * value) + 0.0 for value in values)
    return x, y, z, w


class _Attributes:
    """The model's vertex arrays as document attributes, decoded once and sliced per mesh."""

    def __init__(self, model: IqmModel, document: IqeDocument) -> None:
        self.model = model
        self.document = document
        count = model.vertex_count
        self.arrays: dict[str, FloatArray] = {}
        self.blend_indices: npt.NDArray[np.int32] | None = None
        self.blend_weights: FloatArray | None = None
        self.custom: dict[int, FloatArray] = {}
        next_slot = 0
        for array in model.vertex_arrays:
            if array.kind == "custom":
                slot = _custom_slot(array.name, next_slot)
                if slot is None:
                    document.warnings.add(f"custom array {array.name!r} left out: IQE holds at most {_SLOTS} customs")
                    continue
                next_slot = slot + 1
                self.custom[slot] = self._finite(decode(array.values, array.component).astype(np.float32), array.name)
                if (array.component, array.size) != CUSTOM_DEFAULT or array.name != f"custom{slot}":
                    document.vertex_arrays.append(
                        IqeVertexArrayFormat(f"custom{slot}", array.component, array.size, array.name)
                    )
                continue
            if (array.component, array.size) != DEFAULT_FORMATS[array.kind]:
                document.vertex_arrays.append(IqeVertexArrayFormat(array.kind, array.component, array.size, array.kind))
            if array.kind in ("blendindexes", "blendweights"):
                continue
            self.arrays[array.kind] = self._finite(_columns(array, count), array.kind)
        self._read_blends(document)

    def _finite(self, values: npt.NDArray[np.floating[Any]], kind: str) -> FloatArray:
        """The array with NaN and infinite numbers read as 0, said in a warning; tangents, which no import uses
        (the reference compiler writes NaN ones where texture coordinates give none), silently."""
        zeroed, rows = zeroed_non_finite(values)
        if rows and kind != "tangent":
            self.document.warnings.add(f"{rows:,} of {len(values):,} vertices have NaN or infinite numbers in their "
                                       f"{kind}: read as 0")  # fmt: skip
        return np.asarray(zeroed, np.float32)

    def _read_blends(self, document: IqeDocument) -> None:
        indices, weights = self.model.array("blendindexes"), self.model.array("blendweights")
        if indices is None and weights is None:
            return
        if indices is None or weights is None:
            document.warnings.add("blend indices without blend weights (or the reverse) ignored")
            return
        index_values = _padded(decode(indices.values, indices.component, normalized=False), MAX_INFLUENCES, 0.0)
        weight_values = _padded(self._finite(decode(weights.values, weights.component), "blend weights"),
                                MAX_INFLUENCES, 0.0)  # fmt: skip
        used = weight_values > 0.0
        joints = len(self.model.joint_names)
        limit = joints if joints else 256
        bad = used & ((index_values < 0) | (index_values >= limit))
        if bad.any():
            vertex, slot = divmod(int(np.argmax(bad.ravel())), MAX_INFLUENCES)
            raise FormatError(
                f"vertex {vertex} is weighted to joint {int(index_values[vertex, slot])}, but the file has {joints} "
                "joints",
                offset=indices.offset + (vertex * indices.size + slot) * indices.values.dtype.itemsize,
            )
        self.blend_indices = np.where(used, index_values, 0).astype(np.int32)
        self.blend_weights = weight_values.astype(np.float32)

    def mesh(self, index: int) -> IqeMesh:
        info = self.model.meshes[index]
        first, end = info.first_vertex, info.first_vertex + info.vertex_count
        triangles = self.model.triangles[info.first_triangle : info.first_triangle + info.triangle_count]
        corners = triangles.ravel().astype(np.int64)
        vertex_ids: npt.NDArray[np.int64] | slice = slice(first, end)
        local = corners - first
        if corners.size and (int(corners.min()) < first or int(corners.max()) >= end):
            # (engines index the whole vertex array: real files have meshes sharing vertices; each gets copies)
            outside = np.unique(corners[(corners < first) | (corners >= end)])
            self_ids = np.concatenate((np.arange(first, end, dtype=np.int64), outside))
            order = np.argsort(self_ids, kind="stable")
            local = order[np.searchsorted(self_ids[order], corners)]
            vertex_ids = self_ids
        positions = self._take("position", vertex_ids, 3)
        assert positions is not None  # the decoder refuses vertices without positions
        mesh = IqeMesh(info.name, info.material, positions)
        mesh.texcoords = self._take("texcoord", vertex_ids, 2)
        mesh.normals = self._take("normal", vertex_ids, 3)
        mesh.tangents = self._take("tangent", vertex_ids, 4, (0.0, 0.0, 0.0, 1.0))
        mesh.colors = self._take("color", vertex_ids, 4, (0.0, 0.0, 0.0, 1.0))
        if self.blend_indices is not None and self.blend_weights is not None:
            mesh.blend_indices = np.ascontiguousarray(self.blend_indices[vertex_ids])
            mesh.blend_weights = np.ascontiguousarray(self.blend_weights[vertex_ids])
        mesh.custom = {slot: np.ascontiguousarray(values[vertex_ids]) for slot, values in self.custom.items()}
        mesh.face_corners = local.astype(np.int32)
        mesh.face_sizes = np.full(triangles.shape[0], 3, np.int32)
        return mesh

    def _take(
        self, kind: str, vertex_ids: npt.NDArray[np.int64] | slice, width: int, defaults: tuple[float, ...] = ()
    ) -> FloatArray | None:
        values = self.arrays.get(kind)
        if values is None:
            return None
        return np.ascontiguousarray(_padded(values, width, *defaults)[vertex_ids], np.float32)


def _columns(array: IqmVertexArray, count: int) -> FloatArray:
    return decode(array.values, array.component).astype(np.float32).reshape(count, array.size)


def _padded(values: npt.NDArray[Any], width: int, *defaults: float) -> npt.NDArray[Any]:
    """`values` cut or padded to `width` columns; missing columns take `defaults` (0 where none is given)."""
    have = values.shape[1]
    if have >= width:
        return values[:, :width]
    fill = np.array([*(defaults or (0.0,) * width)][have:width], values.dtype)
    return np.concatenate((values, np.broadcast_to(fill, (values.shape[0], width - have))), axis=1)


def _custom_slot(name: str, next_slot: int) -> int | None:
    """`customN` keeps slot N when that keeps the file's order; other names take the next free slot."""
    match = _CUSTOM_NAME.fullmatch(name)
    if match is not None and int(match.group(1)) >= next_slot:
        return int(match.group(1))
    return next_slot if next_slot < _SLOTS else None


def _joints_of_poses(model: IqmModel, document: IqeDocument) -> list[IqeJoint]:
    """Joints for an animation-only file (the compiler writes no joints without meshes: the animation is for a
    model of the same skeleton, matched by joint number): numbered, parented as its poses, placed and turned as in
    its first frame, unscaled (a rest holds no scale: an uneven one would shear the children's poses), said in a
    note."""
    parents = model.pose_parents.tolist()
    if any(not -1 <= parent < index for index, parent in enumerate(parents)):
        raise FormatError("animation poses whose parents do not come before them, in a file without joints")
    first = document.animations[0].frames
    if not first.shape[0]:
        return []
    pose = first[0].astype(np.float64)
    document.joints_numbered = True
    document.notes.append(f"{NUMBERED_JOINTS_NOTE} (an animation for a model of the same skeleton): "
                          f"{len(parents)} joints named joint_0... were made, placed as in the first frame")
    return [IqeJoint(f"joint_{index}", parent, _triple(row[0:3]), _quaternion(row[3:7]), (1.0, 1.0, 1.0))
            for index, (parent, row) in enumerate(zip(parents, pose, strict=True))]  # fmt: skip


def _animations(model: IqmModel, document: IqeDocument) -> list[IqeAnimation]:
    joints, poses = len(model.joint_names), model.pose_masks.shape[0]
    if not model.anims:
        if model.frames.shape[0]:
            document.warnings.add(f"{model.frames.shape[0]} frames belong to no animation; ignored")
        return []
    if joints and poses != joints:
        raise FormatError(f"{poses} animation poses for {joints} joints: there must be one pose per joint")
    if joints and not np.array_equal(model.pose_parents, model.joint_parents):
        document.warnings.add("pose parents differ from joint parents; the joints' are used")
    frames = model.decoded_frames()
    return [
        IqeAnimation(anim.name, float(anim.framerate), bool(anim.flags & LOOP_FLAG),
                     np.ascontiguousarray(frames[anim.first_frame : anim.first_frame + anim.frame_count]))
        for anim in model.anims
    ]  # fmt: skip


def _grouped_animations(model: IqmModel, document: IqeDocument, groups: list[FrameGroup]) -> list[IqeAnimation]:
    """The file's frames cut into the framegroups (numbered over all of them, clamped as DarkPlaces clamps them);
    each event goes to the first group that plays its frame."""
    frames = model.decoded_frames()
    total = frames.shape[0]
    if not total or not groups:
        document.warnings.add("framegroups ignored: the file has no animation frames" if groups else
                              "the framegroups file holds no group: the file's animations kept")  # fmt: skip
        return document.animations
    played = [clamped(group, total) for group in groups]
    moved = sum(1 for group, kept in zip(groups, played, strict=True)
                if (group.first_frame, group.frame_count) != (kept.first_frame, kept.frame_count))  # fmt: skip
    if moved:
        document.warnings.add(f"{moved} framegroups reach beyond the file's {total} frames: cut to them")
    animations = [IqeAnimation(group.engine_name(index), group.fps, group.loop,
                               np.ascontiguousarray(frames[group.first_frame : group.first_frame + group.frame_count]))
                  for index, group in enumerate(played)]  # fmt: skip
    for anim, animation in zip(model.anims, document.animations, strict=True):
        for event in animation.events:
            frame = anim.first_frame + event_frame(event.time, anim.framerate)
            target = next((i for i, g in enumerate(played) if g.first_frame <= frame < g.first_frame + g.frame_count),
                          None)  # fmt: skip
            if target is not None:
                group = played[target]
                animations[target].events.append(IqeEvent((frame - group.first_frame) / group.fps, event.code,
                                                           event.data))  # fmt: skip
    document.notes.append(f"{len(played)} animations made of the file's {total} frames by its framegroups")
    return animations
