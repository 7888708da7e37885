"""The layers of a procedural face, painted back to front, and the shape toolkit they are drawn with.

`FaceRenderer._render_chunk` (render.py) frames a chunk of faces, measures them once (a `_Geometry`:
where every feature sits in each image; a `_Look`: what each face looks like) and then calls the
layers below in order, each painting into the chunk's `N x 3 x H x W` image in place. The order is
the picture: later layers cover earlier ones, and `light` multiplies everything painted before it
(the eyewear and the scarf come after it: frames and lenses are not shaded, the scarf takes the
exposure alone).

The layers keep the renderer's bit-exactness: an image's pixels depend on its own attributes and
seed only, whichever chunk or window they are computed in (see `_Frame.paint` and `_wave`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import torch


def _col(x: np.ndarray | float) -> torch.Tensor:
    """Per-image scalars as a `N x 1 x 1` float32 tensor."""
    return torch.as_tensor(np.asarray(x, np.float32)).view(-1, 1, 1)


C = _col  # every per-image scalar passes through it, so it goes by one letter


def _rgb(x: np.ndarray) -> torch.Tensor:
    """Per-image colours as a `N x 3 x 1 x 1` float32 tensor (a single colour broadcasts)."""
    return torch.as_tensor(np.asarray(x, np.float32)).view(-1, 3, 1, 1)


def _smooth(e0: float | torch.Tensor, e1: float | torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    t = ((x - e0) / (e1 - e0)).clamp_(0.0, 1.0)
    return t * t * (3.0 - 2.0 * t)


def _sq(x: torch.Tensor) -> torch.Tensor:
    return x * x


def _wave(x: torch.Tensor) -> torch.Tensor:
    """A sine-like wave of period 1 in [-1, 1] from exact ops (floor, multiply), so that a pixel
    comes out bit-identical whatever window or batch it is computed in (torch's vectorised and
    scalar `sin` differ in the last bit)."""
    f = x - torch.floor(x)
    return 8.0 * f * (1.0 - f) - 1.0


_DARK = _rgb(np.array([0.09, 0.07, 0.06]))  # pupils, lid lines, spectacle frames (made on the CPU: `.to` the image's device)


class _Frame:
    """Face-aligned coordinates `u, v` of one chunk, or of a window of it, plus the shape helpers.

    `crop` narrows the frame to the pixel window that holds a feature in every image of the chunk,
    so small features cost a small window, not the whole canvas.
    """

    def __init__(self, u: torch.Tensor, v: torch.Tensor, inv_px: torch.Tensor, pose: tuple, res: int,
                 window: tuple[slice, slice] = (slice(None), slice(None))) -> None:
        self.u, self.v, self.inv_px, self.pose, self.res, self.window = u, v, inv_px, pose, res, window

    def crop(self, cx, cy, hx, hy) -> _Frame:
        """The window covering the face-frame box `cx +- hx, cy +- hy` in every image."""
        x0, y0, s, cos, sin = self.pose
        cx, cy, h = np.broadcast_to(cx, x0.shape), np.broadcast_to(cy, x0.shape), np.maximum(hx, hy)
        X = x0 + s * (cos * cx - sin * cy)
        Y = y0 + s * (sin * cx + cos * cy)
        e = s * np.broadcast_to(h, x0.shape) * 1.42 + 3.0 / self.res

        def lo(c: np.ndarray) -> int:
            return int(np.clip(np.floor(((c - e).min() + 1) / 2 * self.res), 0, self.res))

        def hi(c: np.ndarray) -> int:
            return int(np.clip(np.ceil(((c + e).max() + 1) / 2 * self.res), 0, self.res))

        ys, xs = slice(lo(Y), max(lo(Y), hi(Y))), slice(lo(X), max(lo(X), hi(X)))
        return _Frame(self.u[:, ys, xs], self.v[:, ys, xs], self.inv_px, self.pose, self.res, (ys, xs))

    def paint(self, img: torch.Tensor, color: torch.Tensor, alpha: torch.Tensor) -> None:
        """Composites `color` over `img` with coverage `alpha`, inside this window."""
        if color.shape[-1] == self.res and alpha.shape[-1] != self.res:
            color = color[..., self.window[0], self.window[1]]
        target = img[..., self.window[0], self.window[1]]
        # target += (color - target) * alpha, as three exact IEEE ops: torch's fused lerp kernel
        # rounds differently on its vector and scalar paths, which would make a pixel depend on
        # the window (and so on the batch) it was computed in.
        target.add_((color - target) * alpha.unsqueeze(1))

    def cover(self, d: torch.Tensor) -> torch.Tensor:
        """Coverage from a signed distance (negative inside), one pixel of anti-aliasing ramp."""
        return (0.5 - d * self.inv_px).clamp_(0.0, 1.0)

    def ellipse(self, cx, cy, rx, ry) -> torch.Tensor:
        du, dv = (self.u - cx) / rx, (self.v - cy) / ry
        q = torch.sqrt(du * du + dv * dv)
        return self.cover((q - 1.0) * torch.minimum(torch.as_tensor(rx), torch.as_tensor(ry)))

    def ring(self, cx, cy, rx, ry, width) -> torch.Tensor:
        du, dv = (self.u - cx) / rx, (self.v - cy) / ry
        q = torch.sqrt(du * du + dv * dv)
        return self.cover((q - 1.0).abs() * torch.minimum(torch.as_tensor(rx), torch.as_tensor(ry)) - width / 2)

    def blob(self, cx, cy, sx, sy) -> torch.Tensor:
        """A soft bump, close to `exp(-q^2)` but exactly zero beyond `q = 2` (so a window that
        holds `2 sx, 2 sy` holds all of it, whatever else shares the chunk)."""
        du, dv = (self.u - cx) / sx, (self.v - cy) / sy
        t = (1.0 - (du * du + dv * dv) / 4.0).clamp_(min=0.0)
        t = t * t
        return t * t

    def band(self, centre: torch.Tensor, half: torch.Tensor, along: torch.Tensor, half_len) -> torch.Tensor:
        """A curved stroke: |v - centre| < half, for |along| < half_len (along in face units)."""
        return self.cover((self.v - centre).abs() - half) * self.cover(along.abs() - half_len)


# ---------------------------------------------------------------------- per-chunk state


@dataclass
class _Geometry:
    """Where everything sits in one chunk: the frame, and per image (length-N arrays, face units)
    the measurements of its face and, derived from them under yaw, the features' projected places."""

    full: _Frame  # the whole canvas in face coordinates
    x: torch.Tensor  # the image's pixel centres in [-1, 1], `1 x 1 x W`
    y: torch.Tensor  # and `1 x H x 1`
    yaw: np.ndarray  # radians
    A: np.ndarray  # face half-width
    taper: np.ndarray  # how far the jaw narrows the lower half of the face
    ey: np.ndarray  # eye line
    ex: np.ndarray  # eye centre's distance from the midline (frontal)
    erx: np.ndarray  # eye half-width
    ery: np.ndarray  # eye half-height (smiling narrows it)
    ny: np.ndarray  # nostril line
    nw: np.ndarray  # nostril distance from the midline
    my: np.ndarray  # mouth line
    mw: np.ndarray  # mouth half-width
    lip: np.ndarray  # lip thickness
    fshift: np.ndarray = field(init=False)  # face oval's sideways shift under yaw
    shift: np.ndarray = field(init=False)  # skull's (hair, ears, torso) sideways shift under yaw
    eyes: list[tuple[np.ndarray, np.ndarray]] = field(init=False)  # (centre, foreshortening), left and right
    nose_x: np.ndarray = field(init=False)
    mouth_x: np.ndarray = field(init=False)
    fw_m: np.ndarray = field(init=False)  # foreshortening at the mouth (and nose)

    def __post_init__(self) -> None:
        # Yaw: the face oval moves towards the turn, the skull (hair, ears) against it, and each
        # feature rides a sphere about the face's centre.
        self.fshift = 0.18 * np.sin(self.yaw)
        self.shift = -0.12 * np.sin(self.yaw)
        A, ex = self.A, self.ex
        self.eyes = [self.place(-ex, A), self.place(ex, A)]
        self.nose_x, _ = self.place(0.0, A * 1.15)
        self.mouth_x, self.fw_m = self.place(0.0, A)

    @property
    def n(self) -> int:
        return self.full.u.shape[0]

    @property
    def res(self) -> int:
        return self.full.res

    def place(self, u0: np.ndarray | float, radius: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Projected centre and foreshortening of a surface point at `u0` under yaw."""
        th0 = np.arcsin(np.clip(u0 / radius, -0.99, 0.99))
        th = th0 + self.yaw
        return self.fshift + radius * np.sin(th), np.clip(np.cos(th) / np.cos(th0), 0.05, 1.5)


@dataclass
class _Look:
    """What each face of the chunk looks like: the attributes the layers read, per image."""

    attrs: dict[str, np.ndarray]  # every attribute, float32 (for the layers that read one alone)
    gp: np.ndarray  # gender presentation, 0 masculine .. 1 feminine
    masc: np.ndarray  # 1 - gp
    old: np.ndarray  # 0 up to 50 years, 1 from 80
    smile: np.ndarray
    hair_len: np.ndarray
    makeup: np.ndarray
    fh: np.ndarray  # facial hair
    eyewear: np.ndarray  # int, an index into `EYEWEAR`
    brow_height: np.ndarray  # shape coefficient in [-1, 1]
    hairline: np.ndarray  # shape coefficient in [-1, 1]
    skin: np.ndarray  # `N x 3` colours from here on
    hair: np.ndarray
    clothes: np.ndarray
    scarf: np.ndarray
    iris: np.ndarray


@dataclass
class _Hair:
    """The hair's window and shapes, made once by `body` (which paints what hangs behind the head)
    and painted again by `hair_front` (the cap above the hairline and the curtains at the sides)."""

    frame: _Frame
    cap: torch.Tensor
    hang: torch.Tensor
    texture: torch.Tensor
    has_hair: torch.Tensor
    long_hair: torch.Tensor


# ---------------------------------------------------------------------- the layers, back to front


def background(geo: _Geometry, look: _Look, nuisance: np.ndarray) -> torch.Tensor:
    """A grey level with a seeded tint, a vertical gradient and three soft seeded blobs; returns
    the chunk's `N x 3 x H x W` image, which every later layer paints into."""
    n, r, x, y = geo.n, geo.res, geo.x, geo.y
    bg = look.attrs["background"][:, None] * (1 + 0.35 * nuisance[:, 2:5]) + 0.04
    shading = (1.08 - 0.16 * (y + 1) / 2).expand(n, r, r)
    for k in range(3):
        bx, by, bs = nuisance[:, 5 + 3 * k], nuisance[:, 6 + 3 * k], nuisance[:, 7 + 3 * k]
        width = C(0.05 + 0.04 * (bs + 1))
        blob = torch.exp(-_sq(x - C(bx)) / width) * torch.exp(-_sq(y - C(by)) / width)
        shading = shading * (1 + 0.25 * C(bs) * blob)
    return _rgb(np.clip(bg, 0, 1)) * shading.unsqueeze(1)


def body(img: torch.Tensor, geo: _Geometry, look: _Look) -> _Hair:
    """Torso, the hair behind the head, neck and ears: everything the face oval covers. Returns the
    hair's shapes, whose front part `hair_front` paints over the face later."""
    full, A, ey, shift = geo.full, geo.A, geo.ey, geo.shift
    hair_len, masc, skin = look.hair_len, look.masc, look.skin
    g = full.crop(shift, 2.05, 1.75, 0.85)
    g.paint(img, _rgb(look.clothes), g.ellipse(C(shift), 2.05, 1.75, 0.85))
    has_hair = C(np.clip(hair_len / 0.08, 0, 1))
    long_hair = _smooth(0.15, 0.4, C(hair_len))
    vol = 0.5 + 0.5 * hair_len
    cap_c = (C(shift * 0.8), C(-0.10 - 0.03 * vol), C(A * 1.08 + 0.05 * vol), C(1.10 + 0.06 * vol))
    hang_c = (C(shift), C(-0.1 + 0.95 * hair_len), C(A * 1.12 + 0.22 * hair_len), C(1.12 + 0.95 * hair_len))
    hf = full.crop(shift, -0.1 + 0.95 * hair_len, A * 1.12 + 0.22 * hair_len + 0.1, 1.12 + 0.95 * hair_len + 0.1)
    cap, hang = hf.ellipse(*cap_c), hf.ellipse(*hang_c)
    hair_tex = _rgb(look.hair) * (0.85 + 0.15 * _wave(hf.u * 8.75 + 0.95 * hf.v)).unsqueeze(1)
    hf.paint(img, hair_tex, torch.maximum(cap * has_hair, hang * long_hair))
    g = full.crop(shift * 0.5, 1.1, 0.4, 0.55)
    g.paint(img, _rgb(skin * 0.78), g.ellipse(C(shift * 0.5), 1.1, C(0.30 + 0.05 * masc), 0.55))
    for side in (-1.0, 1.0):
        ear_x = side * A * 0.99 + shift
        g = full.crop(ear_x, ey + 0.12, 0.12, 0.2)
        g.paint(img, _rgb(skin * 0.92), g.ellipse(C(ear_x), C(ey + 0.12), 0.11, 0.19))
        g.paint(img, _rgb(skin * 0.7), g.ellipse(C(ear_x + side * 0.01), C(ey + 0.13), 0.05, 0.11) * 0.6)
    return _Hair(hf, cap, hang, hair_tex, has_hair, long_hair)


def face(img: torch.Tensor, geo: _Geometry, look: _Look) -> None:
    """The skin of the face, an ellipse whose lower half tapers to the jaw, then what grows or is
    put on it: facial hair and blush."""
    full, A, fshift, ny, mouth_x, fw_m = geo.full, geo.A, geo.fshift, geo.ny, geo.mouth_x, geo.fw_m
    fh, makeup = look.fh, look.makeup
    fc = full.crop(fshift, 0.0, A * 1.02, 1.12)
    fu = fc.u - C(fshift)
    w = (C(A) * (1 - C(geo.taper) * _sq(fc.v.clamp(min=0.0)))).clamp_(min=0.05)
    q = torch.sqrt(_sq(fu / w) + fc.v * fc.v)
    fc.paint(img, _rgb(look.skin), fc.cover((q - 1.0) * torch.minimum(w, torch.ones_like(w))))

    # facial hair (stubble below 0.4, a full beard above), under the lips
    if (fh > 0.02).any():
        boundary = C(ny + 0.08) - 0.42 * _sq(fu / C(A))
        density = np.where(fh < 0.4, fh / 0.4 * 0.55, 0.55 + 0.45 * (fh - 0.4) / 0.6) * (fh > 0.02)
        grain = 0.88 + 0.12 * _wave(fu * 14.3 + 0.5 * _wave(fc.v * 6.4))
        beard = _smooth(boundary - 0.03, boundary + 0.06, fc.v) * fc.ellipse(C(fshift), 0.0, C(A * 1.02), C(1.0 + 0.1 * fh))
        fc.paint(img, _rgb(look.hair * 0.8), beard * C(density) * grain)

    # makeup: blush
    if (makeup > 0).any():
        for side in (-1.0, 1.0):
            bx = mouth_x + side * 0.42 * fw_m
            g = full.crop(bx, ny - 0.03, 0.3, 0.3)
            g.paint(img, _rgb(np.array([0.85, 0.35, 0.40])), g.blob(C(bx), C(ny - 0.03), 0.13, 0.09) * C(0.35 * makeup))


def eyes(img: torch.Tensor, geo: _Geometry, look: _Look) -> None:
    """Each eye: eye shadow, the white, iris, pupil, the upper lid line and the brow."""
    full, ey, erx, ery = geo.full, geo.ey, geo.erx, geo.ery
    gp, masc, makeup = look.gp, look.masc, look.makeup
    brow_col = np.clip(look.hair * 0.55 + 0.02, 0, 1) * (1 - 0.3 * makeup[:, None])
    dark = _DARK.to(img.device)
    for ex_i, fw in geo.eyes:
        g = full.crop(ex_i, ey - 0.1, 0.35 * np.maximum(fw, 1.0), 0.25)
        rx = C(erx * fw)
        du = (g.u - C(ex_i)) / rx
        lens = C(ery) * (1 - du * du)
        if (makeup > 0).any():
            shadow = g.blob(C(ex_i), C(ey - 0.06), C(0.16 * fw), 0.07) * C(0.55 * makeup)
            g.paint(img, _rgb(np.array([0.45, 0.30, 0.45])), shadow)
        eye = g.cover((g.v - C(ey)).abs() - lens) * g.cover(du.abs() * rx - rx)
        g.paint(img, _rgb(0.8 * np.array([0.93, 0.91, 0.89]) + 0.2 * look.skin), eye)
        ir = C(ery * 1.05)
        g.paint(img, _rgb(look.iris), g.ellipse(C(ex_i), C(ey), ir * C(fw), ir) * eye)
        g.paint(img, dark * 0.3, g.ellipse(C(ex_i), C(ey), ir * C(0.45 * fw), ir * 0.45) * eye)
        lid_w = C(0.012 + 0.008 * gp + 0.015 * makeup)
        lid = g.cover(((g.v - C(ey)) + lens).abs() - lid_w) * g.cover(du.abs() * rx - rx * 1.08)
        g.paint(img, dark, lid)
        bl = C(0.16 * fw)
        db = (g.u - C(ex_i)) / bl
        arch = C(ey - 0.19 - 0.05 * look.brow_height) - C(0.04 + 0.03 * gp) * (1 - db * db)
        brow = g.band(arch, C(0.018 + 0.016 * masc) * (1 - 0.45 * db * db), db * bl, bl)
        g.paint(img, _rgb(brow_col), brow * 0.95)


def nose_and_mouth(img: torch.Tensor, geo: _Geometry, look: _Look) -> None:
    """The nostrils (the nose's shading comes with the light), and the lips, bent by the smile,
    with teeth when it opens."""
    full, ny, nw, nose_x, my, mw, mouth_x, fw_m = geo.full, geo.ny, geo.nw, geo.nose_x, geo.my, geo.mw, geo.mouth_x, geo.fw_m
    skin, smile, makeup, lip = look.skin, look.smile, look.makeup, geo.lip
    g = full.crop(nose_x, ny, 0.2, 0.06)
    for side in (-1.0, 1.0):
        g.paint(img, _rgb(skin * 0.35), g.ellipse(C(nose_x + side * nw * fw_m), C(ny + 0.01), C(0.035 * fw_m), 0.022) * 0.9)

    g = full.crop(mouth_x, my, mw + 0.05, 0.16)
    dm = (g.u - C(mouth_x)) / C(mw * fw_m)
    span = (1 - dm * dm).clamp(min=0.0)
    dv = (g.v - C(my)) + C(0.09 * smile) * dm * dm - C(0.03 * smile)
    opening = C(np.clip(smile - 0.45, 0, None) * 0.09) * span
    lip_col = skin * np.array([0.82, 0.55, 0.55], np.float32)
    lip_col = lip_col * (1 - makeup[:, None]) + np.array([0.72, 0.10, 0.18], np.float32) * makeup[:, None]
    inside = g.cover(dm.abs() - 1.0)
    upper = g.cover((dv + opening + C(lip * 0.4) * span).abs() - C(lip * 0.4) * span)
    lower = g.cover((dv - opening - C(lip * 0.55) * span).abs() - C(lip * 0.55) * span)
    g.paint(img, _rgb(lip_col), torch.maximum(upper, lower) * inside)
    g.paint(img, _rgb(np.array([0.93, 0.90, 0.85])), g.cover(dv.abs() - opening) * g.cover(dm.abs() - 0.85))
    g.paint(img, _rgb(lip_col * 0.35), g.cover(dv.abs() - 0.007) * inside * 0.9)


def age_lines(img: torch.Tensor, geo: _Geometry, look: _Look) -> None:
    """Creases of age (and of smiling): forehead lines, nasolabial folds."""
    full, fshift, ny, my, mw, mouth_x = geo.full, geo.fshift, geo.ny, geo.my, geo.mw, geo.mouth_x
    skin, old = look.skin, look.old
    creases = 0.5 * old + 0.15 * look.smile
    creases = np.where(creases > 0.01, creases, 0.0)  # the same cut-off alone or in a batch
    if (creases > 0.01).any():
        g = full.crop(fshift, -0.57, 0.4, 0.12)
        gu = g.u - C(fshift)
        lines = sum(g.cover((g.v - hv - 0.03 * gu * gu).abs() - 0.006) for hv in (-0.52, -0.62)) * g.cover(gu.abs() - 0.35)
        g.paint(img, _rgb(skin * 0.6), lines * C(0.5 * old))
        for side in (-1.0, 1.0):
            fx = mouth_x + side * (mw + 0.02)
            g = full.crop(fx - side * 0.04, (ny + my) / 2, 0.1, 0.2)
            fold_u = C(fx) - side * 0.1 * (C(my) - g.v).clamp(min=0.0)
            fold = g.cover((g.u - fold_u).abs() - 0.007) * _smooth(C(ny - 0.1), C(ny), g.v) * _smooth(C(my + 0.05), C(my - 0.02), g.v)
            g.paint(img, _rgb(skin * 0.6), fold * C(creases))


def hair_front(img: torch.Tensor, geo: _Geometry, look: _Look, hair: _Hair) -> None:
    """The hair in front of the face: the cap above the hairline (which recedes with age on
    masculine faces), and curtains of long hair at the sides."""
    A, fshift, hf = geo.A, geo.fshift, hair.frame
    hairline = C(-0.62 + 0.07 * look.hairline + 0.22 * look.old * look.masc) + 0.38 * _sq((hf.u - C(fshift)) / C(A))
    front = hair.cap * _smooth(hairline + 0.02, hairline - 0.04, hf.v) * hair.has_hair
    # the curtains frame the face: their inner edges sit on the head at +-0.85 A and turn with it
    edge_l, edge_r = geo.place(-0.85 * A, A)[0], geo.place(0.85 * A, A)[0]
    framed = _smooth(C(edge_l + 0.04), C(edge_l - 0.08), hf.u) + _smooth(C(edge_r - 0.04), C(edge_r + 0.08), hf.u)
    curtains = hair.hang * hair.long_hair * framed * _smooth(-0.3, -0.5, hf.v - C(look.hair_len))
    hf.paint(img, hair.texture, torch.maximum(front, curtains))


def earrings(img: torch.Tensor, geo: _Geometry, look: _Look) -> None:
    """A gold disc hanging below each ear, its radius growing with `earrings` (none below 0.03,
    fading in up to 0.08)."""
    full, A, ey, shift = geo.full, geo.A, geo.ey, geo.shift
    ear_on = np.clip((look.attrs["earrings"] - 0.03) / 0.05, 0, 1)
    if ear_on.any():
        rad = 0.02 + 0.05 * look.attrs["earrings"]
        for side in (-1.0, 1.0):
            ex_e = side * A * 0.99 + shift
            g = full.crop(ex_e, ey + 0.32 + rad, rad, rad)
            g.paint(img, _rgb(np.array([0.88, 0.70, 0.25])), g.ellipse(C(ex_e), C(ey + 0.32 + rad), C(rad), C(rad)) * C(ear_on))


def light(img: torch.Tensor, geo: _Geometry, look: _Look) -> np.ndarray:
    """Multiplies everything painted so far by the light: Lambert on a head-sized ellipsoid,
    ambient occlusion at the eye sockets, beside and under the nose and under the lip, and the
    camera's exposure. Returns the exposure, which the scarf (painted later, unlit) takes too."""
    full, n, r, A, fshift = geo.full, geo.n, geo.res, geo.A, geo.fshift
    ey, ny, my, nose_x, mouth_x = geo.ey, geo.ny, geo.my, geo.nose_x, geo.mouth_x
    az = np.radians(look.attrs["light_direction"])
    L = np.stack([np.sin(az), np.full_like(az, -0.35), np.cos(az)], 1)
    L = L / np.linalg.norm(L, axis=1, keepdims=True)
    light = torch.ones(n, r, r, device=img.device)
    g = full.crop(fshift / 2, -0.05, A * 1.25, 1.25)
    nu, nv = (g.u - C(fshift / 2)) / C(A * 1.25), (g.v + 0.05) / 1.25
    nz = torch.sqrt((1 - nu * nu - nv * nv).clamp(min=0.02))
    lambert = (nu * C(L[:, 0]) + nv * C(L[:, 1]) + nz * C(L[:, 2])).clamp(min=0.0)
    head = _smooth(1.05, 0.95, torch.sqrt(nu * nu + nv * nv))
    shade = 0.34 + 0.66 * lambert / C(L[:, 2].clip(0.35))
    light[:, g.window[0], g.window[1]] = 1.0 + head * (shade - 1.0)
    side = np.sign(L[:, 0]) + (L[:, 0] == 0)
    occluders = [
        *[(ex_i, ey - 0.01, 0.17 * fw, 0.12, -0.40) for ex_i, fw in geo.eyes],
        (nose_x - side * 0.075, ny - 0.12, 0.04, 0.17, -(0.10 + 0.25 * np.abs(L[:, 0]))),
        (nose_x + side * 0.02, ny - 0.15, 0.025, 0.16, 0.12),
        (nose_x, ny + 0.07, 0.09, 0.035, -0.22),
        (mouth_x, my + 0.1 + 0.06 * look.smile, 0.12, 0.03, -0.18),
    ]
    for ox, oy, sx, sy, k in occluders:
        g = full.crop(ox, oy, 2 * sx, 2 * sy)
        light[:, g.window[0], g.window[1]] *= 1.0 + C(k) * g.blob(C(ox), C(oy), C(sx), C(sy))
    # the camera meters on the face: half-way auto-exposure towards a mid-grey face
    skin_luma = look.skin @ np.array([0.299, 0.587, 0.114], np.float32)
    exposure = look.attrs["light_intensity"] * np.clip(np.sqrt(0.5 / skin_luma), 1.0, 1.6)
    img.mul_((light * C(exposure)).unsqueeze(1))
    return exposure


def eyewear(img: torch.Tensor, geo: _Geometry, look: _Look) -> None:
    """Glasses (rims and bridge) or sunglasses (dark lenses as well), over the lit face (frames
    catch the light the same way)."""
    full, ey, nose_x = geo.full, geo.ey, geo.nose_x
    eyewear = look.eyewear
    if (eyewear > 0).any():
        frame_col = _DARK.to(img.device) * 0.9
        for ex_i, fw in geo.eyes:
            g = full.crop(ex_i, ey + 0.01, 0.22, 0.17)
            lrx = C(0.19 * fw)
            lens = g.ellipse(C(ex_i), C(ey + 0.01), lrx, 0.14)
            g.paint(img, _rgb(np.array([0.04, 0.04, 0.05])), lens * C(eyewear == 2) * 0.95)
            g.paint(img, frame_col, g.ring(C(ex_i), C(ey + 0.01), lrx, 0.14, 0.03) * C(eyewear > 0))
        g = full.crop(nose_x, ey - 0.03, 0.3, 0.03)
        gap = np.abs(geo.eyes[1][0] - geo.eyes[0][0]) / 2 - 0.17
        g.paint(img, frame_col, g.band(C(ey - 0.03), 0.012, g.u - C(nose_x), C(gap)) * C(eyewear > 0))


def occlusion(img: torch.Tensor, geo: _Geometry, look: _Look, exposure: np.ndarray) -> None:
    """A scarf pulled up over the lower face, up to the eyes at `occlusion` 1; painted after the
    light, so it takes the exposure but no shading of the head."""
    full, A, ey, fshift = geo.full, geo.A, geo.ey, geo.fshift
    occ = look.attrs["occlusion"]
    if (occ > 0.01).any():
        g = full.crop(fshift, 0.75, A * 1.25, 0.8)
        gu = g.u - C(fshift)
        top = C(1.2 - occ * (1.2 - (ey + 0.14))) + 0.1 * _sq(gu / C(A))
        cloth = _smooth(top, top + 0.03, g.v) * g.cover(gu.abs() - C(A * 1.2)) * g.cover(g.v - 1.5) * C(occ > 0.01)
        folds = 0.85 + 0.15 * _wave(g.v * 6.4 + g.u * 0.95)
        g.paint(img, _rgb(look.scarf * exposure[:, None]) * folds.unsqueeze(1), cloth)


def camera(img: torch.Tensor, geo: _Geometry, look: _Look, rngs: list[np.random.Generator], noise_bank: torch.Tensor) -> np.ndarray:
    """Blur (per image), sensor noise (a field of the bank at an offset drawn from the image's own
    seed) and quantisation; returns the chunk as `N x H x W x 3` uint8."""
    r = geo.res
    img.clamp_(0.0, 1.0)
    blur = look.attrs["blur"] * r / 128.0
    for i in np.nonzero(blur > 0.25)[0]:
        img[i] = _gaussian_blur(img[i], float(blur[i]))
    noise = look.attrs["noise"]
    for i in np.nonzero(noise > 0)[0]:
        k, dy, dx = rngs[i].integers(0, (len(noise_bank), r, r))
        img[i] += noise_bank[k].roll((int(dy), int(dx)), (1, 2)) * float(noise[i])
    return img.clamp_(0.0, 1.0).mul_(255.0).add_(0.5).to(torch.uint8).permute(0, 2, 3, 1).cpu().numpy()


def _gaussian_blur(img: torch.Tensor, sigma: float) -> torch.Tensor:
    """Separable Gaussian blur of one `3 x H x W` image with reflect padding (rows, then columns,
    each as one batched 1-D convolution)."""
    radius = max(1, math.ceil(3 * sigma))
    x = torch.arange(-radius, radius + 1, dtype=torch.float32, device=img.device)
    k = torch.exp(-0.5 * (x / sigma) ** 2)
    k = (k / k.sum()).view(1, 1, -1)
    c, h, w = img.shape
    pad = torch.nn.functional.pad(img.unsqueeze(0), (radius, radius, radius, radius), mode="reflect")[0]
    rows = torch.nn.functional.conv1d(pad.reshape(-1, 1, w + 2 * radius), k).view(c, h + 2 * radius, w)
    cols = torch.nn.functional.conv1d(rows.transpose(1, 2).reshape(-1, 1, h + 2 * radius), k)
    return cols.view(c, w, h).transpose(1, 2)
