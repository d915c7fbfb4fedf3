// Small charts of what the job page polls, as Flink's UI shows a vertex's figures over time: records per second
// in and the back-pressured share per vertex, and the checkpoints' durations. Each is an inline SVG polyline
// scaled to its own maximum; its points carry the values (data-values) so the page can be checked against REST.

import { s } from "./dom.js";

/** The last `limit` readings of one figure. */
export class Series {
  constructor(limit = 60) {
    this.limit = limit;
    this.points = [];
  }

  push(value) {
    if (typeof value !== "number" || !Number.isFinite(value)) return;
    this.points.push(value);
    if (this.points.length > this.limit) this.points.shift();
  }
}

/** Records per second from two readings of a counter (`null` until there are two, or when it went back). */
export class Rate {
  constructor() {
    this.last = null;
  }

  next(total, atMs) {
    if (typeof total !== "number" || total < 0) return null;
    const prev = this.last;
    this.last = { total, atMs };
    if (!prev || atMs <= prev.atMs || total < prev.total) return null;
    return ((total - prev.total) * 1000) / (atMs - prev.atMs);
  }
}

/** An inline sparkline of `values`: a polyline from left to right, 0 at the bottom, the maximum at the top;
 * `title` is its accessible name (the caller puts a tooltip on the element around it). */
export function sparkline(values, { width = 120, height = 26, className = "", title = "" } = {}) {
  const top = Math.max(...values, 0) || 1;
  const step = values.length > 1 ? width / (values.length - 1) : 0;
  const points = values
    .map((v, i) => `${(i * step).toFixed(1)},${(height - 2 - (v / top) * (height - 4)).toFixed(1)}`)
    .join(" ");
  return s(
    "svg",
    {
      class: `sparkline ${className}`.trim(),
      width,
      height,
      viewBox: `0 0 ${width} ${height}`,
      role: "img",
      "aria-label": title,
      dataset: { values: values.map((v) => String(Math.round(v * 1000) / 1000)).join(" ") },
    },
    s("line", { x1: 0, y1: height - 1, x2: width, y2: height - 1, class: "baseline" }),
    values.length ? s("polyline", { points, fill: "none" }) : null,
  );
}
