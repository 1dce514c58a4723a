#!/usr/bin/env node
/**
 * Draws kubelab's icons, so that they are reproducible without an image editor or the network:
 * build/icon.png (1024×1024, from which electron-builder makes the .icns, .ico and Linux
 * sizes) and resources/tray/<level>.png (16×16, with @2x at 32×32) for the tray, one per
 * health level of main/shell/trayhealth.ts. Run `node build/make-icons.mjs` after changing it;
 * the PNGs are committed.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { crc32, deflateSync } from 'node:zlib';

const ROOT = join(import.meta.dirname, '..');

/** A PNG file (8-bit RGBA, no interlace) of `size`×`size` pixels from `rgba` (row-major). */
function png(size, rgba) {
  const chunk = (type, data) => {
    const head = Buffer.alloc(8);
    head.writeUInt32BE(data.length, 0);
    head.write(type, 4, 'latin1');
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(crc32(Buffer.concat([head.subarray(4), data])), 0);
    return Buffer.concat([head, data, crc]);
  };
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(size, 0);
  ihdr.writeUInt32BE(size, 4);
  ihdr.set([8, 6, 0, 0, 0], 8);
  const rows = Buffer.alloc(size * (size * 4 + 1));
  for (let y = 0; y < size; y++) {
    rows[y * (size * 4 + 1)] = 0; // filter: none
    rgba.copy(rows, y * (size * 4 + 1) + 1, y * size * 4, (y + 1) * size * 4);
  }
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', ihdr),
    chunk('IDAT', deflateSync(rows, { level: 9 })),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

/**
 * Renders `paint(x, y)` — a colour [r, g, b, a] (0–255) or null, in a 0..1 square — with 4×4
 * samples per pixel, so edges are smooth at every size.
 */
function render(size, paint) {
  const out = Buffer.alloc(size * size * 4);
  const n = 4;
  for (let py = 0; py < size; py++) {
    for (let px = 0; px < size; px++) {
      let r = 0;
      let g = 0;
      let b = 0;
      let a = 0;
      for (let sy = 0; sy < n; sy++) {
        for (let sx = 0; sx < n; sx++) {
          const c = paint((px + (sx + 0.5) / n) / size, (py + (sy + 0.5) / n) / size);
          if (!c) continue;
          const w = c[3] / 255;
          r += c[0] * w;
          g += c[1] * w;
          b += c[2] * w;
          a += w;
        }
      }
      const i = (py * size + px) * 4;
      if (a > 0) {
        out[i] = Math.round(r / a);
        out[i + 1] = Math.round(g / a);
        out[i + 2] = Math.round(b / a);
      }
      out[i + 3] = Math.round((a / (n * n)) * 255);
    }
  }
  return out;
}

const hex = (s, alpha = 255) => [
  parseInt(s.slice(1, 3), 16),
  parseInt(s.slice(3, 5), 16),
  parseInt(s.slice(5, 7), 16),
  alpha,
];

/** Signed distance from (x, y) to a regular hexagon of circumradius r centred at (0.5, 0.5). */
function hexagon(x, y, r) {
  const kx = -Math.sqrt(3) / 2;
  const ky = 0.5;
  const kz = 1 / Math.sqrt(3);
  let px = Math.abs(x - 0.5);
  let py = Math.abs(y - 0.5);
  const d = 2 * Math.min(kx * px + ky * py, 0);
  px -= d * kx;
  py -= d * ky;
  const inner = (r * Math.sqrt(3)) / 2;
  const cx = Math.min(Math.max(px, -kz * inner), kz * inner);
  return Math.hypot(px - cx, py - inner) * Math.sign(py - inner);
}

/** Inside a square with rounded corners (radius `rad`) filling the unit square less `margin`. */
function roundedSquare(x, y, margin, rad) {
  const half = 0.5 - margin - rad;
  const dx = Math.max(Math.abs(x - 0.5) - half, 0);
  const dy = Math.max(Math.abs(y - 0.5) - half, 0);
  return Math.hypot(dx, dy) <= rad;
}

/** The app icon: the GUI's accent blue, a hexagon (a cluster) holding a node. */
function appIcon(x, y) {
  if (!roundedSquare(x, y, 0.06, 0.18)) return null;
  const ring = Math.abs(hexagon(x, y, 0.27));
  if (ring < 0.035) return hex('#ffffff');
  if (Math.hypot(x - 0.5, y - 0.5) < 0.08) return hex('#ffffff');
  // A light top-to-bottom shade, as desktop icons have.
  const t = y;
  return [Math.round(0x3d - 0x1a * t), Math.round(0x7c - 0x30 * t), Math.round(0xea - 0x3a * t), 255];
}

const TRAY = {
  healthy: '#2e8b57',
  degraded: '#e59a1a',
  down: '#c0392b',
  idle: '#8a8a8f',
};

/** A tray dot: filled in its level's colour, with a darker rim to stand out on any panel. */
function trayDot(color, hollow) {
  const fill = hex(color);
  const rim = [Math.round(fill[0] * 0.6), Math.round(fill[1] * 0.6), Math.round(fill[2] * 0.6), 255];
  return (x, y) => {
    const d = Math.hypot(x - 0.5, y - 0.5);
    if (d > 0.44) return null;
    if (d > 0.36) return rim;
    return hollow ? null : fill;
  };
}

function write(path, data) {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, data);
  process.stdout.write(`wrote ${path.slice(ROOT.length + 1)} (${data.length} bytes)\n`);
}

write(join(ROOT, 'build', 'icon.png'), png(1024, render(1024, appIcon)));
for (const [level, color] of Object.entries(TRAY)) {
  const paint = trayDot(color, level === 'idle');
  write(join(ROOT, 'resources', 'tray', `${level}.png`), png(16, render(16, paint)));
  write(join(ROOT, 'resources', 'tray', `${level}@2x.png`), png(32, render(32, paint)));
}
