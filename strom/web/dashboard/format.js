// How figures read on the page. Flink's conventions: -1 (or 0 for a time) means "not known / not reached".

/** Long.MIN_VALUE as JavaScript parses it: Flink's "no watermark yet". */
const NO_WATERMARK_BELOW = -9.2e18;

const pad = (n, width = 2) => String(n).padStart(width, "0");

export function count(n) {
  return typeof n === "number" && n >= 0 ? n.toLocaleString("en-US") : "–";
}

export function bytes(n) {
  if (typeof n !== "number" || n < 0) return "–";
  if (n < 1024) return `${n} B`;
  const units = ["KB", "MB", "GB", "TB"];
  let value = n / 1024;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return `${value.toFixed(value < 10 ? 2 : 1)} ${units[unit]}`;
}

export function duration(ms) {
  if (typeof ms !== "number" || ms < 0) return "–";
  if (ms < 1000) return `${Math.round(ms)} ms`;
  const seconds = ms / 1000;
  if (seconds < 60) return `${seconds.toFixed(seconds < 10 ? 2 : 1)} s`;
  const total = Math.floor(seconds);
  const h = Math.floor(total / 3600);
  const m = Math.floor((total % 3600) / 60);
  const sec = total % 60;
  return h > 0 ? `${h}h ${m}m ${sec}s` : `${m}m ${sec}s`;
}

/** A wall-clock time (epoch milliseconds) in the browser's time zone; "–" for 0 / -1. */
export function time(ms) {
  if (typeof ms !== "number" || ms <= 0) return "–";
  const d = new Date(ms);
  return (
    `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ` +
    `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}.${pad(d.getMilliseconds(), 3)}`
  );
}

/** A share of time from a "...TimeMsPerSecond" figure. */
export function perSecondShare(msPerSecond) {
  if (typeof msPerSecond !== "number" || !Number.isFinite(msPerSecond)) return "–";
  return `${Math.round(Math.min(1000, Math.max(0, msPerSecond)) / 10)}%`;
}

export function ratio(r) {
  return typeof r === "number" && Number.isFinite(r) ? `${Math.round(r * 100)}%` : "–";
}

/** A watermark as the REST API gives it (a number or a numeric string). */
export function watermark(value) {
  if (value === undefined || value === null || value === "") return "–";
  const n = Number(value);
  if (!Number.isFinite(n)) return String(value);
  return n <= NO_WATERMARK_BELOW ? "No Watermark" : time(n);
}
