// DOM building without HTML strings. Text always enters the page as text nodes and attribute values through
// setAttribute, so whatever the REST API returns (job and operator names, tracebacks, paths) is shown, never
// interpreted. Nothing in the dashboard assigns innerHTML.

const SVG_NS = "http://www.w3.org/2000/svg";

function append(node, children) {
  for (const child of children.flat(Infinity)) {
    if (child === undefined || child === null || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
}

function build(node, props, children) {
  for (const [key, value] of Object.entries(props || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key.startsWith("on") && typeof value === "function") {
      node.addEventListener(key.slice(2), value);
    } else if (key === "dataset") {
      Object.assign(node.dataset, value);
    } else {
      node.setAttribute(key, value === true ? "" : String(value));
    }
  }
  append(node, children);
  return node;
}

/** An HTML element: h("a", {href: "#/x", class: "c"}, "text", child, [more]). */
export function h(tag, props, ...children) {
  return build(document.createElement(tag), props, children);
}

/** An SVG element, same arguments. */
export function s(tag, props, ...children) {
  return build(document.createElementNS(SVG_NS, tag), props, children);
}

/** Replace the children of `container`. */
export function fill(container, ...children) {
  container.replaceChildren();
  append(container, children);
  return container;
}

/** A table: `columns` are header labels, `rows` arrays of cells (text or nodes), `rowProps` optional per row. */
export function table(columns, rows, { empty = "None.", rowProps = () => ({}), className = "" } = {}) {
  if (rows.length === 0) return h("p", { class: "muted empty" }, empty);
  return h(
    "table",
    { class: className },
    h("thead", null, h("tr", null, columns.map((c) => h("th", null, c)))),
    h("tbody", null, rows.map((cells, i) => h("tr", rowProps(i), cells.map((c) => h("td", null, c))))),
  );
}

/** A definition list from [label, value] pairs. */
export function facts(pairs, className = "facts") {
  return h("dl", { class: className }, pairs.map(([k, v]) => [h("dt", null, k), h("dd", null, v)]));
}
