"""Generated inputs of tools/bench.py's cases that are not one large mesh (no bpy here): a track-like JPK pack of
many small JOE members with a VDrift `list.txt` and tiny PNG textures, a car-like folder of JOE models with a `.car`
file naming their textures, an IQE of many small meshes, a QC of many small SMDs, and an IQE skeleton without a
mesh.
"""

from __future__ import annotations

import struct
import zlib
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt

from formats import iqe, joe, jpk  # (tools/bench.py puts the repository root on sys.path first)

LIST_PARAMETERS = 17  # lines per object of VDrift's track list.txt (its first line)


# ------------------------------------------------------------------------------------------------ images


def png_bytes(width: int, height: int, rgba: tuple[int, int, int, int]) -> bytes:
    """A solid-colour RGBA PNG of width x height pixels."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    row = b"\0" + bytes(rgba) * width  # filter type 0, then the pixels
    header = struct.pack(">IIBBBBB", width, height, 8, 6, 0, 0, 0)  # 8 bits, RGBA, deflate, no filter, no interlace
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(row * height))
            + chunk(b"IEND", b""))  # fmt: skip


# ------------------------------------------------------------------------------------------------ track pack


@dataclass
class TrackPack:
    path: Path  # the .jpk; list.txt and the textures are beside it
    members: int
    triangles: int
    textures: int


def _member(rng: np.random.Generator, triangles: int, origin: npt.NDArray[np.float64]) -> joe.JoeDocument:
    """A bumpy patch of about `triangles` triangles at `origin`: a smooth JOE model with UVs."""
    across = max(1, int(np.sqrt(triangles / 2)))
    along = max(1, triangles // (2 * across))
    size = rng.uniform(1.0, 6.0)
    xs, ys = np.meshgrid(np.linspace(0, size, across + 1), np.linspace(0, size, along + 1), indexing="ij")
    zs = rng.normal(0.0, 0.05, xs.shape)
    positions = (np.stack([xs.ravel(), ys.ravel(), zs.ravel()], axis=1) + origin).astype(np.float32)
    corner = (np.arange(across)[:, None] * (along + 1) + np.arange(along)[None, :]).ravel()
    quads = np.stack([corner, corner + along + 1, corner + along + 2, corner + 1], axis=1)
    corner_verts = np.concatenate([quads[:, [0, 1, 2]], quads[:, [0, 2, 3]]]).ravel()
    faces = positions[corner_verts].reshape(-1, 3, 3).astype(np.float64)
    face_normals = np.cross(faces[:, 1] - faces[:, 0], faces[:, 2] - faces[:, 0])
    vertex_normals = np.zeros((len(positions), 3))
    np.add.at(vertex_normals, corner_verts, np.repeat(face_normals, 3, axis=0))
    vertex_normals /= np.linalg.norm(vertex_normals, axis=1, keepdims=True)
    uvs = (positions[:, :2] - origin[:2]) / 2.0
    return joe.document_from_triangles(
        positions[corner_verts], vertex_normals[corner_verts].astype(np.float32), uvs[corner_verts].astype(np.float32),
        vertex_table=(positions, corner_verts),
    )  # fmt: skip


def list_txt(models: list[str], textures: list[str], blended: list[bool]) -> str:
    """VDrift's old track object list: the parameter count, then per object its model, texture, mipmap, nolighting,
    skybox, transparent_blend and the surface values (bump wavelength and amplitude, friction, ...)."""
    lines = [str(LIST_PARAMETERS)]
    for model, texture, blend in zip(models, textures, blended, strict=True):
        lines += [model, texture, "1", "0", "0", "1" if blend else "0",
                  "10.0", "0.0", "1", "1", "0.9", "1.0", "1.0", "0.0", "0", "0", "0"]  # fmt: skip
    return "\n".join(lines) + "\n"


def track_pack(folder: Path, members: int = 2000, textures: int = 300, smallest: int = 24, largest: int = 300,
               seed: int = 7) -> TrackPack:  # fmt: skip
    """`folder`/track.jpk: `members` JOE models of `smallest` to `largest` triangles, laid out over a few hundred
    metres, each given one of `textures` 4x4 PNGs by `folder`/list.txt (one in ten alpha blended)."""
    folder.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)
    texture_names = [f"surface{index:03d}.png" for index in range(textures)]
    for index, name in enumerate(texture_names):
        colour = (40 + index % 200, 90 + (index * 7) % 160, 30 + (index * 13) % 200, 255)
        (folder / name).write_bytes(png_bytes(4, 4, colour))
    pack_members, models, chosen, blended, total = [], [], [], [], 0
    side = int(np.ceil(np.sqrt(members)))
    for index in range(members):
        name = f"object{index:04d}.joe"
        origin = np.array([(index % side) * 8.0, (index // side) * 8.0, 0.0])
        document = _member(rng, int(rng.integers(smallest, largest + 1)), origin)
        total += document.first_frame.face_count
        pack_members.append(jpk.JpkMember(name, joe.write_joe(document)))
        models.append(name)
        chosen.append(texture_names[int(rng.integers(textures))])
        blended.append(index % 10 == 0)
    path = folder / "track.jpk"
    path.write_bytes(jpk.write_jpk(jpk.JpkDocument(pack_members)))
    (folder / "list.txt").write_text(list_txt(models, chosen, blended), encoding="ascii")
    return TrackPack(path, members, total, textures)


# ------------------------------------------------------------------------------------------------ car folder


@dataclass
class CarFolder:
    models: list[Path]  # the .joe files; the .car files and the textures are beside them
    car: Path  # the .car file naming them
    triangles: int


def car_folder(folder: Path, models: int = 30, smallest: int = 50, largest: int = 2000, seed: int = 8) -> CarFolder:
    """`folder` as a VDrift car's: `models` JOE files of `smallest` to `largest` triangles (the last one the wheel),
    each with a 4x4 PNG of its own, which the `.car` file's sections name (`mesh`, `texture`; one in five
    `draw = transparent`; four wheels of one model with their tyres), and a second `.car` file of the same sections,
    as cars have (VDrift's newer and older physics)."""
    folder.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)
    paths, sections, total = [], [], 0
    for index in range(models):
        name = f"part{index:02d}"
        document = _member(rng, int(rng.integers(smallest, largest + 1)), np.array([index * 7.0, 0.0, 0.0]))
        total += document.first_frame.face_count
        paths.append(folder / f"{name}.joe")
        paths[-1].write_bytes(joe.write_joe(document))
        (folder / f"{name}.png").write_bytes(png_bytes(4, 4, (60 + index * 6, 120, 200 - index * 5, 255)))
        if index < models - 1:
            draw = "draw = transparent\n" if index % 5 == 0 else ""
            sections.append(f"[{name}]\nmesh = {name}.joe\ntexture = {name}.png\n{draw}position = 0, 0, 0\n")
    (folder / "tire.png").write_bytes(png_bytes(4, 4, (30, 30, 30, 255)))
    for side, (x, y) in {"fl": (-0.8, 1.3), "fr": (0.8, 1.3), "rl": (-0.8, -1.3), "rr": (0.8, -1.3)}.items():
        sections.append(f"[wheel.{side}]\nposition = {x}, {y}, 0.3\nmesh = {paths[-1].name}\n"
                        f"texture = {paths[-1].stem}.png\nmass = 20\n[wheel.{side}.tire]\nsize = 215, 45, 17\n"
                        "texture = tire.png\n")  # fmt: skip
    for car in ("car.car", "car_old.car"):
        (folder / car).write_text("\n".join(sections), encoding="ascii")
    return CarFolder(paths, folder / "car.car", total)


# ------------------------------------------------------------------------------------------------ many meshes

PATCH_SIDE = 22  # quads a side of each small mesh: 968 triangles, 529 vertices


def _patch(index: int, rng: np.random.Generator) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.int32]]:
    """A small bumpy grid beside the previous ones: (V, 3) positions and (T, 3) triangles."""
    ticks = np.linspace(0.0, 1.0, PATCH_SIDE + 1, dtype=np.float32)
    x, y = np.meshgrid(ticks, ticks, indexing="ij")
    positions = np.stack([x.ravel() + index * 1.5, y.ravel(), rng.random(x.size, np.float32) * 0.1], axis=1)
    corner = (np.arange(PATCH_SIDE)[:, None] * (PATCH_SIDE + 1) + np.arange(PATCH_SIDE)[None, :]).ravel()
    quads = np.stack([corner, corner + PATCH_SIDE + 1, corner + PATCH_SIDE + 2, corner + 1], axis=1)
    triangles = np.concatenate([quads[:, [0, 1, 2]], quads[:, [0, 2, 3]]], axis=1).reshape(-1, 3)
    return positions.astype(np.float32), triangles.astype(np.int32)


def many_meshes_iqe(path: Path, count: int = 100, seed: int = 5) -> int:
    """An IQE of `count` small meshes, each with its own material, UVs and normals; its triangle count."""
    rng = np.random.default_rng(seed)
    document = iqe.IqeDocument()
    for index in range(count):
        positions, triangles = _patch(index, rng)
        document.meshes.append(iqe.IqeMesh(
            f"part{index}", f"material{index}", positions, texcoords=positions[:, :2] - [index * 1.5, 0.0],
            normals=np.tile(np.array([0.0, 0.0, 1.0], np.float32), (len(positions), 1)),
            face_corners=triangles.ravel(), face_sizes=np.full(len(triangles), 3, np.int32)))  # fmt: skip
    iqe.save_iqe(path, document)
    return count * 2 * PATCH_SIDE * PATCH_SIDE


def many_smds_qc(folder: Path, count: int = 60, seed: int = 6) -> tuple[Path, int]:
    """`folder`/many.qc naming `count` small reference SMDs beside it ($body), each with its own material; the QC
    and its triangle count."""
    folder.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)
    qc = ['$modelname "many.mdl"', '$cdmaterials "models"']
    for index in range(count):
        positions, triangles = _patch(index, rng)
        lines = ["version 1", "nodes", '0 "root" -1', "end", "skeleton", "time 0", "0 0 0 0 0 0 0", "end",
                 "triangles"]  # fmt: skip
        corners = positions[triangles.ravel()]
        rows = [f"0 {x:.6f} {y:.6f} {z:.6f} 0.000000 0.000000 1.000000 {x - index * 1.5:.6f} {y:.6f}"
                for x, y, z in corners.tolist()]  # fmt: skip
        for triangle in range(len(triangles)):
            lines += [f"material{index}", *rows[3 * triangle : 3 * triangle + 3]]
        (folder / f"part{index}.smd").write_text("\n".join([*lines, "end", ""]), encoding="ascii")
        qc.append(f'$body "part{index}" "part{index}.smd"')
    qc.append('$sequence idle "part0.smd"')
    path = folder / "many.qc"
    path.write_text("\n".join([*qc, ""]), encoding="ascii")
    return path, count * 2 * PATCH_SIDE * PATCH_SIDE


# ------------------------------------------------------------------------------------------------ skeleton


@dataclass
class Skeleton:
    names: list[str]
    parents: list[int]  # each joint's parent, an earlier joint (-1: the root)
    poses: npt.NDArray[np.float64]  # (J, 7) base pose relative to the parent: translation, quaternion x, y, z, w

    def iqe_text(self) -> str:
        """An IQE file of the joints alone: each `joint` line followed by its `pq` base pose."""
        lines = ["# Inter-Quake Export"]
        for name, parent, pose in zip(self.names, self.parents, self.poses.tolist(), strict=True):
            lines.append(f'joint "{name}" {parent}')
            lines.append("pq " + " ".join(f"{value:.6g}" for value in pose))
        return "\n".join(lines) + "\n"

    def heads_and_tails(self, length: float = 0.1) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
        """Each joint's position in armature space, and a point `length` along its Y axis (a bone's head and
        tail), composing every joint's pose with its parents'."""
        x, y, z, w = self.poses[:, 3], self.poses[:, 4], self.poses[:, 5], self.poses[:, 6]
        local = np.zeros((len(self.names), 4, 4))
        local[:, 0] = np.stack([1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w), self.poses[:, 0]], 1)
        local[:, 1] = np.stack([2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w), self.poses[:, 1]], 1)
        local[:, 2] = np.stack([2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y), self.poses[:, 2]], 1)
        local[:, 3, 3] = 1.0
        world = np.empty_like(local)
        for joint, parent in enumerate(self.parents):
            world[joint] = local[joint] if parent < 0 else world[parent] @ local[joint]
        heads = world[:, :3, 3]
        return heads, heads + world[:, :3, 1] * length


def skeleton(count: int = 8000, children: int = 3, seed: int = 11) -> Skeleton:
    """`count` joints with unique names in a tree (each joint has up to `children` children), each a little way
    from its parent and turned a little."""
    rng = np.random.default_rng(seed)
    parents = [-1] + [(joint - 1) // children for joint in range(1, count)]
    names = ["root"] + [f"joint{joint:05d}" for joint in range(1, count)]
    poses = np.zeros((count, 7))
    poses[1:, :3] = rng.normal(0.0, 0.05, (count - 1, 3)) + np.array([0.0, 0.15, 0.0])
    half_angles = rng.uniform(-0.2, 0.2, count)
    axes = rng.normal(size=(count, 3))
    axes /= np.linalg.norm(axes, axis=1, keepdims=True)
    poses[:, 3:6] = axes * np.sin(half_angles)[:, None]
    poses[:, 6] = -np.cos(half_angles)  # (w <= 0, as IQE writers keep it)
    return Skeleton(names, parents, poses)
