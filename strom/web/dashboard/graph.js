// The job graph in SVG, left to right as Flink's UI draws it: a vertex's column is its longest path from a
// source, boxes stack within a column in the plan's order, and an edge runs from a producer's right side to its
// consumer's left side with the ship strategy (HASH, FORWARD, REBALANCE, ...) written on it.

import { s } from "./dom.js";

const CHAR_W = 7; // px per character of the 12px sans-serif (an estimate: the SVG is laid out before it is shown)
const WRAP = 38; // characters per name line
const LINE_H = 16;
const PAD = 10;
const COL_GAP = 120; // room for the edge label
const ROW_GAP = 28;
const MARGIN = 16;

function wrap(text) {
  const lines = [];
  for (const part of text.split(" -> ").map((p, i) => (i === 0 ? p : `→ ${p}`))) {
    for (let rest = part; rest.length > 0; rest = rest.slice(WRAP)) lines.push(rest.slice(0, WRAP));
  }
  return lines;
}

/** Columns and boxes of the plan's nodes: {boxes: Map(id -> {x, y, w, h, lines, node}), width, height}. */
export function layout(nodes, infoLines) {
  const byId = new Map(nodes.map((n) => [n.id, n]));
  const column = new Map();
  const depth = (id, seen) => {
    if (column.has(id)) return column.get(id);
    if (seen.has(id)) return 0; // a cycle (iterations): break it
    seen.add(id);
    const inputs = (byId.get(id).inputs || []).filter((i) => byId.has(i.id));
    const d = inputs.reduce((m, i) => Math.max(m, depth(i.id, seen) + 1), 0);
    column.set(id, d);
    return d;
  };
  nodes.forEach((n) => depth(n.id, new Set()));

  const columns = [];
  for (const n of nodes) (columns[column.get(n.id)] ||= []).push(n);
  const boxes = new Map();
  let x = MARGIN;
  const heights = [];
  for (const col of columns.filter(Boolean)) {
    const sized = col.map((node) => {
      const lines = wrap(node.description || node.id);
      const longest = Math.max(...lines.map((l) => l.length), ...infoLines.map((l) => l.length));
      return { node, lines, w: Math.max(170, longest * CHAR_W + 2 * PAD), h: (lines.length + infoLines.length) * LINE_H + 2 * PAD };
    });
    const width = Math.max(...sized.map((b) => b.w));
    let y = 0;
    for (const b of sized) {
      boxes.set(b.node.id, { ...b, x, y, w: width });
      y += b.h + ROW_GAP;
    }
    heights.push({ ids: sized.map((b) => b.node.id), height: y - ROW_GAP });
    x += width + COL_GAP;
  }
  const height = Math.max(0, ...heights.map((c) => c.height));
  for (const c of heights) {
    const shift = MARGIN + (height - c.height) / 2; // centre every column on the tallest
    for (const id of c.ids) boxes.get(id).y += shift;
  }
  return { boxes, width: x - COL_GAP + MARGIN, height: height + 2 * MARGIN };
}

function edge(from, to, input) {
  const x1 = from.x + from.w;
  const y1 = from.y + from.h / 2;
  const x2 = to.x;
  const y2 = to.y + to.h / 2;
  const bend = Math.max(40, (x2 - x1) / 2);
  const label = input.ship_strategy || "";
  const lx = (x1 + x2) / 2;
  const ly = (y1 + y2) / 2;
  const lw = label.length * CHAR_W + 10;
  return s(
    "g",
    { class: "edge", dataset: { source: input.id, strategy: label } },
    s("path", { d: `M${x1},${y1} C${x1 + bend},${y1} ${x2 - bend},${y2} ${x2 - 2},${y2}`, "marker-end": "url(#arrow)" }),
    label && s("rect", { x: lx - lw / 2, y: ly - 9, width: lw, height: 18, rx: 4 }),
    label && s("text", { x: lx, y: ly + 4, "text-anchor": "middle" }, label),
  );
}

/**
 * The plan drawn as an <svg>. `info(id)` gives the status class and the lines under a vertex's name;
 * `onSelect(id)` is called when a box is clicked; `selected` is the highlighted vertex id.
 */
export function drawGraph(plan, info, onSelect, selected) {
  const nodes = plan.nodes || [];
  const sample = nodes.length ? info(nodes[0].id).lines : [];
  const { boxes, width, height } = layout(nodes, sample.map(() => "Backpressured (max): 100% · Busy (max): 100%"));
  const svg = s(
    "svg",
    { class: "job-graph", viewBox: `0 0 ${width} ${height}`, width, height, role: "img", "aria-label": "job graph" },
    s(
      "defs",
      null,
      s(
        "marker",
        { id: "arrow", viewBox: "0 0 10 10", refX: 9, refY: 5, markerWidth: 7, markerHeight: 7, orient: "auto" },
        s("path", { d: "M0,0 L10,5 L0,10 z" }),
      ),
    ),
  );
  for (const n of nodes) {
    for (const input of n.inputs || []) {
      if (boxes.has(input.id)) svg.append(edge(boxes.get(input.id), boxes.get(n.id), input));
    }
  }
  for (const n of nodes) {
    const b = boxes.get(n.id);
    const { status, lines } = info(n.id);
    const text = s("text", { x: b.x + PAD, y: b.y + PAD });
    b.lines.forEach((line, i) => text.append(s("tspan", { class: "v-name", x: b.x + PAD, dy: i === 0 ? 12 : LINE_H }, line)));
    lines.forEach((line) => text.append(s("tspan", { class: line.cls, x: b.x + PAD, dy: LINE_H }, line.text)));
    svg.append(
      s(
        "g",
        {
          class: `vertex status-${status}${n.id === selected ? " selected" : ""}`,
          dataset: { vertexId: n.id, name: n.description, parallelism: n.parallelism, status },
          tabindex: 0,
          onclick: () => onSelect(n.id),
          onkeydown: (e) => (e.key === "Enter" ? onSelect(n.id) : undefined),
        },
        s("title", null, n.description),
        s("rect", { x: b.x, y: b.y, width: b.w, height: b.h, rx: 6 }),
        text,
      ),
    );
  }
  return svg;
}
