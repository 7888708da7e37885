"""A batched, anti-aliased procedural face renderer (torch, CPU).

Every facial part is an analytic shape in a face-aligned frame ``(u, v)``: ``u`` runs left to
right across the face (half-width about 0.7), ``v`` from the top of the forehead (-1) to the chin
(+1). Coverage is anti-aliased from an approximate signed distance (one pixel of ramp), shading
is Lambertian on a head-sized ellipsoid plus ambient occlusion at the eye sockets, nose and lips.
Yaw moves each feature over a sphere-like head (``x = R sin(theta0 + yaw)``) and foreshortens it
by ``cos(theta0 + yaw) / cos(theta0)``; roll and scale are the frame's rotation and size.

The renderer is vectorised over the batch: each image is a handful of per-image scalars that
broadcast against one pixel grid. Images are processed in chunks of 32 so that temporaries stay
in cache. Every operation is per image, so an image's pixels depend on its own attributes and
seed only, never on its batch neighbours.
"""

from __future__ import annotations

import math

import numpy as np
import torch

__all__ = ["EYEWEAR", "HAIR_COLORS", "N_SHAPE", "SKIN_TONES", "FaceRenderer"]

# Fitzpatrick I..VI reference colours (sRGB, 0..1), interpolated for continuous skin_tone.
SKIN_TONES = np.array(
    [
        [0.97, 0.85, 0.77],
        [0.93, 0.76, 0.64],
        [0.84, 0.64, 0.48],
        [0.69, 0.49, 0.33],
        [0.50, 0.34, 0.22],
        [0.32, 0.21, 0.14],
    ]
)
HAIR_COLORS = {
    "black": (0.07, 0.06, 0.05),
    "brown": (0.30, 0.19, 0.11),
    "red": (0.58, 0.26, 0.12),
    "blonde": (0.86, 0.72, 0.46),
    "grey": (0.70, 0.70, 0.69),
}
EYEWEAR = ("none", "glasses", "sunglasses")
IRIS_COLORS = np.array([[0.30, 0.18, 0.09], [0.14, 0.09, 0.06], [0.30, 0.45, 0.62], [0.33, 0.44, 0.28]])
CLOTHES = np.array(
    [[0.15, 0.22, 0.45], [0.55, 0.12, 0.14], [0.18, 0.40, 0.25], [0.85, 0.85, 0.82], [0.12, 0.12, 0.13], [0.75, 0.55, 0.20]]
)
# Identity shape coefficients in [-1, 1]: face width, jaw taper, eye spacing, eye size, nose length,
# nose width, mouth width, lip fullness, brow height, hairline, clothing colour, iris colour.
N_SHAPE = 12
CHUNK = 32
NOISE_BANK = 8


def _col(x: np.ndarray | float) -> torch.Tensor:
    """Per-image scalars as a `N x 1 x 1` float32 tensor."""
    return torch.as_tensor(np.asarray(x, np.float32)).view(-1, 1, 1)


def _rgb(x: np.ndarray) -> torch.Tensor:
    """Per-image colours as a `N x 3 x 1 x 1` float32 tensor (a single colour broadcasts)."""
    return torch.as_tensor(np.asarray(x, np.float32)).view(-1, 3, 1, 1)


def _smooth(e0: float | torch.Tensor, e1: float | torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    t = ((x - e0) / (e1 - e0)).clamp_(0.0, 1.0)
    return t * t * (3.0 - 2.0 * t)


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
        lo = lambda c: int(np.clip(np.floor(((c - e).min() + 1) / 2 * self.res), 0, self.res))
        hi = lambda c: int(np.clip(np.ceil(((c + e).max() + 1) / 2 * self.res), 0, self.res))
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


def _sq(x: torch.Tensor) -> torch.Tensor:
    return x * x


def _wave(x: torch.Tensor) -> torch.Tensor:
    """A sine-like wave of period 1 in [-1, 1] from exact ops (floor, multiply), so that a pixel
    comes out bit-identical whatever window or batch it is computed in (torch's vectorised and
    scalar `sin` differ in the last bit)."""
    f = x - torch.floor(x)
    return 8.0 * f * (1.0 - f) - 1.0


def _pick(palette: np.ndarray, coeff: np.ndarray, offset: int = 0) -> np.ndarray:
    """A palette entry chosen by a shape coefficient in [-1, 1]."""
    k = np.floor((coeff + 1) / 2 * (len(palette) - 1e-6)).astype(int)
    return palette[(k + offset) % len(palette)]


class FaceRenderer:
    """Renders `N x H x W x 3` uint8 faces from per-image attribute arrays.

    Args:
        resolution: image side in pixels, 64 to 256.
    """

    def __init__(self, resolution: int = 128) -> None:
        self.resolution = int(resolution)
        r = self.resolution
        grid = (torch.arange(r, dtype=torch.float32) + 0.5) / r * 2.0 - 1.0
        self._x = grid.view(1, 1, r)
        self._y = grid.view(1, r, 1)
        # Sensor noise: each image adds one field of a fixed bank, rolled by a per-image offset
        # (cheaper than drawing 3 x H x W normals per image, and as Gaussian).
        bank = np.random.default_rng(0x901CE).standard_normal((NOISE_BANK, 3, r, r), dtype=np.float32)
        self._noise = torch.from_numpy(bank)

    def render(self, attrs: dict[str, np.ndarray], shape: np.ndarray, seeds: np.ndarray) -> np.ndarray:
        """Draws one image per row.

        Args:
            attrs: per-image arrays of the rendered attributes (categoricals as indices into
                `HAIR_COLORS` and `EYEWEAR`).
            shape: `N x N_SHAPE` identity shape coefficients in [-1, 1].
            seeds: `N` per-image seeds for the nuisance randomness (framing jitter, background,
                sensor noise).
        """
        n = len(seeds)
        out = np.empty((n, self.resolution, self.resolution, 3), np.uint8)
        # Chunks of similar pose share tight feature windows; the order cannot change a pixel.
        order = np.lexsort((np.asarray(attrs["scale"]), np.asarray(attrs["yaw"]), np.asarray(attrs["roll"])))
        with torch.no_grad():
            for start in range(0, n, CHUNK):
                idx = order[start : start + CHUNK]
                chunk = {k: np.asarray(v)[idx] for k, v in attrs.items()}
                out[idx] = self._render_chunk(chunk, shape[idx], seeds[idx])
        return out

    # ------------------------------------------------------------------ one chunk

    def _render_chunk(self, a: dict[str, np.ndarray], shape: np.ndarray, seeds: np.ndarray) -> np.ndarray:
        n, r = len(seeds), self.resolution
        rngs = [np.random.default_rng(int(s)) for s in seeds]
        nuisance = np.stack([g.uniform(-1.0, 1.0, 14) for g in rngs])  # jitter 2, tint 3, blobs 9
        sh = shape.astype(np.float32)
        f32 = {k: np.asarray(v, np.float32) for k, v in a.items()}
        C = _col

        age, gp, smile = f32["age"], f32["gender_presentation"], f32["smile"]
        masc = 1.0 - gp
        child = np.clip((16.0 - age) / 12.0, 0.0, 1.0)
        old = np.clip((age - 50.0) / 30.0, 0.0, 1.0)
        hair_len, makeup, fh = f32["hair_length"], f32["makeup"], f32["facial_hair"]
        yaw = np.radians(f32["yaw"])

        # --- frame: image coords -> face coords (roll, scale, jitter)
        roll = np.radians(f32["roll"])
        s = 0.46 * f32["scale"]
        x0, y0 = 0.04 * nuisance[:, 0], 0.03 + 0.03 * nuisance[:, 1]
        cos, sin = np.cos(roll), np.sin(roll)
        dx, dy = self._x - C(x0), self._y - C(y0)
        u = (C(cos) * dx + C(sin) * dy) / C(s)
        v = (C(-sin) * dx + C(cos) * dy) / C(s)
        full = _Frame(u, v, C(r * s / 2.0), (x0, y0, s, cos, sin), r)

        # --- geometry of this face (all per-image scalars, face units)
        A = 0.70 + 0.07 * sh[:, 0] + 0.03 * masc + 0.05 * child  # face half-width
        taper = 0.30 + 0.12 * gp + 0.10 * sh[:, 1] - 0.08 * child
        ey = -0.02 + 0.10 * child
        ex = 0.29 + 0.04 * sh[:, 2]
        erx = 0.13 * (1 + 0.15 * sh[:, 3] + 0.15 * child)
        ery = 0.062 * (1 + 0.2 * sh[:, 3] + 0.25 * child) * (1 - 0.3 * smile * smile)
        ny = ey + 0.34 + 0.06 * sh[:, 4] - 0.06 * child
        nw = 0.07 * (1 + 0.3 * sh[:, 5]) + 0.01 * masc
        my = ny + 0.24 - 0.02 * child
        mw = 0.18 * (1 + 0.15 * sh[:, 6]) + 0.05 * smile
        lip = 0.04 * (1 + 0.35 * sh[:, 7] + 0.3 * gp)

        # Yaw: the face oval moves towards the turn, the skull (hair, ears) against it, and each
        # feature rides a sphere about the face's centre.
        fshift = 0.18 * np.sin(yaw)
        shift = -0.12 * np.sin(yaw)

        def place(u0: np.ndarray | float, radius: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
            """Projected centre and foreshortening of a surface point at `u0` under yaw."""
            th0 = np.arcsin(np.clip(u0 / radius, -0.99, 0.99))
            th = th0 + yaw
            return fshift + radius * np.sin(th), np.clip(np.cos(th) / np.cos(th0), 0.05, 1.5)

        eyes = [place(-ex, A), place(ex, A)]
        nose_x, _ = place(0.0, A * 1.15)
        mouth_x, fw_m = place(0.0, A)

        skin = _interp_skin(a["skin_tone"])
        hair = np.array([list(HAIR_COLORS.values())[int(i)] for i in a["hair_color"]], np.float32)
        clothes, scarf = _pick(CLOTHES, sh[:, 10]), _pick(CLOTHES, sh[:, 10], offset=2)
        iris = _pick(IRIS_COLORS, sh[:, 11])
        dark = _rgb(np.array([0.09, 0.07, 0.06]))

        # --- background: grey level with a seeded tint, a vertical gradient and soft blobs
        bg = f32["background"][:, None] * (1 + 0.35 * nuisance[:, 2:5]) + 0.04
        shading = (1.08 - 0.16 * (self._y + 1) / 2).expand(n, r, r)
        for k in range(3):
            bx, by, bs = nuisance[:, 5 + 3 * k], nuisance[:, 6 + 3 * k], nuisance[:, 7 + 3 * k]
            width = C(0.05 + 0.04 * (bs + 1))
            blob = torch.exp(-_sq(self._x - C(bx)) / width) * torch.exp(-_sq(self._y - C(by)) / width)
            shading = shading * (1 + 0.25 * C(bs) * blob)
        img = _rgb(np.clip(bg, 0, 1)) * shading.unsqueeze(1)

        # --- torso, hair behind the head, neck, ears
        g = full.crop(shift, 2.05, 1.75, 0.85)
        g.paint(img, _rgb(clothes), g.ellipse(C(shift), 2.05, 1.75, 0.85))
        has_hair = C(np.clip(hair_len / 0.08, 0, 1))
        long_hair = _smooth(0.15, 0.4, C(hair_len))
        vol = 0.5 + 0.5 * hair_len
        cap_c = (C(shift * 0.8), C(-0.10 - 0.03 * vol), C(A * 1.08 + 0.05 * vol), C(1.10 + 0.06 * vol))
        hang_c = (C(shift), C(-0.1 + 0.95 * hair_len), C(A * 1.12 + 0.22 * hair_len), C(1.12 + 0.95 * hair_len))
        hf = full.crop(shift, -0.1 + 0.95 * hair_len, A * 1.12 + 0.22 * hair_len + 0.1, 1.12 + 0.95 * hair_len + 0.1)
        cap, hang = hf.ellipse(*cap_c), hf.ellipse(*hang_c)
        hair_tex = _rgb(hair) * (0.85 + 0.15 * _wave(hf.u * 8.75 + 0.95 * hf.v)).unsqueeze(1)
        hf.paint(img, hair_tex, torch.maximum(cap * has_hair, hang * long_hair))
        g = full.crop(shift * 0.5, 1.1, 0.4, 0.55)
        g.paint(img, _rgb(skin * 0.78), g.ellipse(C(shift * 0.5), 1.1, C(0.30 + 0.05 * masc), 0.55))
        for side in (-1.0, 1.0):
            ear_x = side * A * 0.99 + shift
            g = full.crop(ear_x, ey + 0.12, 0.12, 0.2)
            g.paint(img, _rgb(skin * 0.92), g.ellipse(C(ear_x), C(ey + 0.12), 0.11, 0.19))
            g.paint(img, _rgb(skin * 0.7), g.ellipse(C(ear_x + side * 0.01), C(ey + 0.13), 0.05, 0.11) * 0.6)

        # --- the face itself: an ellipse whose lower half tapers to the jaw
        fc = full.crop(fshift, 0.0, A * 1.02, 1.12)
        fu = fc.u - C(fshift)
        w = (C(A) * (1 - C(taper) * _sq(fc.v.clamp(min=0.0)))).clamp_(min=0.05)
        q = torch.sqrt(_sq(fu / w) + fc.v * fc.v)
        fc.paint(img, _rgb(skin), fc.cover((q - 1.0) * torch.minimum(w, torch.ones_like(w))))

        # --- facial hair (stubble below 0.4, a full beard above), under the lips
        if (fh > 0.02).any():
            boundary = C(ny + 0.08) - 0.42 * _sq(fu / C(A))
            density = np.where(fh < 0.4, fh / 0.4 * 0.55, 0.55 + 0.45 * (fh - 0.4) / 0.6) * (fh > 0.02)
            grain = 0.88 + 0.12 * _wave(fu * 14.3 + 0.5 * _wave(fc.v * 6.4))
            beard = _smooth(boundary - 0.03, boundary + 0.06, fc.v) * fc.ellipse(C(fshift), 0.0, C(A * 1.02), C(1.0 + 0.1 * fh))
            fc.paint(img, _rgb(hair * 0.8), beard * C(density) * grain)

        # --- makeup: blush
        if (makeup > 0).any():
            for side in (-1.0, 1.0):
                bx = mouth_x + side * 0.42 * fw_m
                g = full.crop(bx, ny - 0.03, 0.3, 0.3)
                g.paint(img, _rgb(np.array([0.85, 0.35, 0.40])), g.blob(C(bx), C(ny - 0.03), 0.13, 0.09) * C(0.35 * makeup))

        # --- eyes, lids, eye shadow, brows
        brow_col = np.clip(hair * 0.55 + 0.02, 0, 1) * (1 - 0.3 * makeup[:, None])
        for ex_i, fw in eyes:
            g = full.crop(ex_i, ey - 0.1, 0.35 * np.maximum(fw, 1.0), 0.25)
            rx = C(erx * fw)
            du = (g.u - C(ex_i)) / rx
            lens = C(ery) * (1 - du * du)
            if (makeup > 0).any():
                shadow = g.blob(C(ex_i), C(ey - 0.06), C(0.16 * fw), 0.07) * C(0.55 * makeup)
                g.paint(img, _rgb(np.array([0.45, 0.30, 0.45])), shadow)
            eye = g.cover((g.v - C(ey)).abs() - lens) * g.cover(du.abs() * rx - rx)
            g.paint(img, _rgb(0.8 * np.array([0.93, 0.91, 0.89]) + 0.2 * skin), eye)
            ir = C(ery * 1.05)
            g.paint(img, _rgb(iris), g.ellipse(C(ex_i), C(ey), ir * C(fw), ir) * eye)
            g.paint(img, dark * 0.3, g.ellipse(C(ex_i), C(ey), ir * C(0.45 * fw), ir * 0.45) * eye)
            lid_w = C(0.012 + 0.008 * gp + 0.015 * makeup)
            lid = g.cover(((g.v - C(ey)) + lens).abs() - lid_w) * g.cover(du.abs() * rx - rx * 1.08)
            g.paint(img, dark, lid)
            bl = C(0.16 * fw)
            db = (g.u - C(ex_i)) / bl
            arch = C(ey - 0.19 - 0.05 * sh[:, 8]) - C(0.04 + 0.03 * gp) * (1 - db * db)
            brow = g.band(arch, C(0.018 + 0.016 * masc) * (1 - 0.45 * db * db), db * bl, bl)
            g.paint(img, _rgb(brow_col), brow * 0.95)

        # --- nose: nostrils (its shading comes with the light below)
        g = full.crop(nose_x, ny, 0.2, 0.06)
        for side in (-1.0, 1.0):
            g.paint(img, _rgb(skin * 0.35), g.ellipse(C(nose_x + side * nw * fw_m), C(ny + 0.01), C(0.035 * fw_m), 0.022) * 0.9)

        # --- mouth: lips bent by the smile, teeth when it opens
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

        # --- age (and smiling): forehead lines, nasolabial folds
        creases = 0.5 * old + 0.15 * smile
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

        # --- hair in front: the cap above the hairline, and curtains of long hair at the sides
        hairline = C(-0.62 + 0.07 * sh[:, 9] + 0.22 * old * masc) + 0.38 * _sq((hf.u - C(fshift)) / C(A))
        front = cap * _smooth(hairline + 0.02, hairline - 0.04, hf.v) * has_hair
        # the curtains frame the face: their inner edges sit on the head at +-0.85 A and turn with it
        edge_l, edge_r = place(-0.85 * A, A)[0], place(0.85 * A, A)[0]
        framed = _smooth(C(edge_l + 0.04), C(edge_l - 0.08), hf.u) + _smooth(C(edge_r - 0.04), C(edge_r + 0.08), hf.u)
        curtains = hang * long_hair * framed * _smooth(-0.3, -0.5, hf.v - C(hair_len))
        hf.paint(img, hair_tex, torch.maximum(front, curtains))

        # --- earrings
        ear_on = np.clip((f32["earrings"] - 0.03) / 0.05, 0, 1)
        if ear_on.any():
            rad = 0.02 + 0.05 * f32["earrings"]
            for side in (-1.0, 1.0):
                ex_e = side * A * 0.99 + shift
                g = full.crop(ex_e, ey + 0.32 + rad, rad, rad)
                g.paint(img, _rgb(np.array([0.88, 0.70, 0.25])), g.ellipse(C(ex_e), C(ey + 0.32 + rad), C(rad), C(rad)) * C(ear_on))

        # --- light: Lambert on a head-sized ellipsoid, ambient occlusion at
        # the eye sockets, beside and under the nose and under the lip
        az = np.radians(f32["light_direction"])
        L = np.stack([np.sin(az), np.full_like(az, -0.35), np.cos(az)], 1)
        L = L / np.linalg.norm(L, axis=1, keepdims=True)
        light = torch.ones(n, r, r)
        g = full.crop(fshift / 2, -0.05, A * 1.25, 1.25)
        nu, nv = (g.u - C(fshift / 2)) / C(A * 1.25), (g.v + 0.05) / 1.25
        nz = torch.sqrt((1 - nu * nu - nv * nv).clamp(min=0.02))
        lambert = (nu * C(L[:, 0]) + nv * C(L[:, 1]) + nz * C(L[:, 2])).clamp(min=0.0)
        head = _smooth(1.05, 0.95, torch.sqrt(nu * nu + nv * nv))
        shade = 0.34 + 0.66 * lambert / C(L[:, 2].clip(0.35))
        light[:, g.window[0], g.window[1]] = 1.0 + head * (shade - 1.0)
        side = np.sign(L[:, 0]) + (L[:, 0] == 0)
        occluders = [
            *[(ex_i, ey - 0.01, 0.17 * fw, 0.12, -0.40) for ex_i, fw in eyes],
            (nose_x - side * 0.075, ny - 0.12, 0.04, 0.17, -(0.10 + 0.25 * np.abs(L[:, 0]))),
            (nose_x + side * 0.02, ny - 0.15, 0.025, 0.16, 0.12),
            (nose_x, ny + 0.07, 0.09, 0.035, -0.22),
            (mouth_x, my + 0.1 + 0.06 * smile, 0.12, 0.03, -0.18),
        ]
        for ox, oy, sx, sy, k in occluders:
            g = full.crop(ox, oy, 2 * sx, 2 * sy)
            light[:, g.window[0], g.window[1]] *= 1.0 + C(k) * g.blob(C(ox), C(oy), C(sx), C(sy))
        # the camera meters on the face: half-way auto-exposure towards a mid-grey face
        skin_luma = skin @ np.array([0.299, 0.587, 0.114], np.float32)
        exposure = f32["light_intensity"] * np.clip(np.sqrt(0.5 / skin_luma), 1.0, 1.6)
        img.mul_((light * C(exposure)).unsqueeze(1))

        # --- eyewear over the lit face (frames catch the light the same way)
        eyewear = a["eyewear"].astype(int)
        if (eyewear > 0).any():
            frame_col = dark * 0.9
            for ex_i, fw in eyes:
                g = full.crop(ex_i, ey + 0.01, 0.22, 0.17)
                lrx = C(0.19 * fw)
                lens = g.ellipse(C(ex_i), C(ey + 0.01), lrx, 0.14)
                g.paint(img, _rgb(np.array([0.04, 0.04, 0.05])), lens * C(eyewear == 2) * 0.95)
                g.paint(img, frame_col, g.ring(C(ex_i), C(ey + 0.01), lrx, 0.14, 0.03) * C(eyewear > 0))
            g = full.crop(nose_x, ey - 0.03, 0.3, 0.03)
            gap = np.abs(eyes[1][0] - eyes[0][0]) / 2 - 0.17
            g.paint(img, frame_col, g.band(C(ey - 0.03), 0.012, g.u - C(nose_x), C(gap)) * C(eyewear > 0))

        # --- occlusion: a scarf pulled up over the lower face
        occ = f32["occlusion"]
        if (occ > 0.01).any():
            g = full.crop(fshift, 0.75, A * 1.25, 0.8)
            gu = g.u - C(fshift)
            top = C(1.2 - occ * (1.2 - (ey + 0.14))) + 0.1 * _sq(gu / C(A))
            cloth = _smooth(top, top + 0.03, g.v) * g.cover(gu.abs() - C(A * 1.2)) * g.cover(g.v - 1.5) * C(occ > 0.01)
            folds = 0.85 + 0.15 * _wave(g.v * 6.4 + g.u * 0.95)
            g.paint(img, _rgb(scarf * exposure[:, None]) * folds.unsqueeze(1), cloth)

        # --- camera: blur (per image), sensor noise (per image seed), quantise
        img.clamp_(0.0, 1.0)
        blur = f32["blur"] * r / 128.0
        for i in np.nonzero(blur > 0.25)[0]:
            img[i] = _gaussian_blur(img[i], float(blur[i]))
        noise = f32["noise"]
        for i in np.nonzero(noise > 0)[0]:
            k, dy, dx = rngs[i].integers(0, (NOISE_BANK, r, r))
            img[i] += self._noise[k].roll((int(dy), int(dx)), (1, 2)) * float(noise[i])
        return img.clamp_(0.0, 1.0).mul_(255.0).add_(0.5).to(torch.uint8).permute(0, 2, 3, 1).numpy()


def _interp_skin(tone: np.ndarray) -> np.ndarray:
    t = np.clip(np.asarray(tone, np.float32) - 1.0, 0.0, 5.0)
    lo = np.floor(t).astype(int).clip(0, 4)
    frac = (t - lo)[:, None]
    return (SKIN_TONES[lo] * (1 - frac) + SKIN_TONES[lo + 1] * frac).astype(np.float32)


def _gaussian_blur(img: torch.Tensor, sigma: float) -> torch.Tensor:
    """Separable Gaussian blur of one `3 x H x W` image with reflect padding (rows, then columns,
    each as one batched 1-D convolution)."""
    radius = max(1, math.ceil(3 * sigma))
    x = torch.arange(-radius, radius + 1, dtype=torch.float32)
    k = torch.exp(-0.5 * (x / sigma) ** 2)
    k = (k / k.sum()).view(1, 1, -1)
    c, h, w = img.shape
    pad = torch.nn.functional.pad(img.unsqueeze(0), (radius, radius, radius, radius), mode="reflect")[0]
    rows = torch.nn.functional.conv1d(pad.reshape(-1, 1, w + 2 * radius), k).view(c, h + 2 * radius, w)
    cols = torch.nn.functional.conv1d(rows.transpose(1, 2).reshape(-1, 1, h + 2 * radius), k)
    return cols.view(c, w, h).transpose(1, 2)
