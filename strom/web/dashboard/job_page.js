// A job's page: its header with the cancel and savepoint actions, then one of three tabs — the graph with the
// vertex table (and a selected vertex's subtasks), the checkpoints, the exceptions. Reads /jobs/:id, /plan,
// /vertices/:vid/{subtasks/metrics,watermarks,backpressure}, /checkpoints(+/config), /exceptions.

import { ApiError, get, patch, paths, post, token } from "./api.js";
import { Rate, Series, sparkline } from "./charts.js";
import { facts, fill, h, table } from "./dom.js";
import { bytes, count, duration, perSecondShare, ratio, time, watermark } from "./format.js";
import { drawGraph } from "./graph.js";
import { badge } from "./pages.js";

const TERMINAL = new Set(["FINISHED", "CANCELED", "FAILED"]);
const TABS = [
  ["overview", "Overview"],
  ["checkpoints", "Checkpoints"],
  ["exceptions", "Exceptions"],
];

/** What is known of one vertex beyond /jobs/:id: the max busy / back-pressured share and the low watermark. */
async function vertexFigures(jid, vid) {
  const [shares, marks] = await Promise.all([get(paths.vertexShares(jid, vid)), get(paths.watermarks(jid, vid))]);
  const max = (id) => (shares.find((m) => m.id === id) || {}).max;
  const values = marks.map((m) => Number(m.value)).filter(Number.isFinite);
  return {
    busy: max("busyTimeMsPerSecond"),
    backpressured: max("backPressuredTimeMsPerSecond"),
    watermark: values.length ? Math.min(...values) : undefined,
  };
}

/** Savepoints triggered from this tab, by job id, so their status survives switching pages. */
const savepoints = new Map();

export class JobPage {
  constructor(jid, tab, vertex) {
    this.jid = jid;
    this.tab = TABS.some(([t]) => t === tab) ? tab : "overview";
    this.vertex = vertex || null;
    this.plan = null;
    this.checkpointConfig = null;
    this.confirming = false;
    this.trends = new Map(); // vertex id -> {rate, throughput: Series, backpressured: Series}, over the polls
  }

  /** A vertex's figures over the polls: records per second (out of a source, into any other vertex) and the
   * back-pressured share; one reading per refresh while the job runs. */
  trend(v, f, isSource, atMs) {
    let t = this.trends.get(v.id);
    if (!t) this.trends.set(v.id, (t = { rate: new Rate(), throughput: new Series(), backpressured: new Series() }));
    const perSecond = t.rate.next(isSource ? v.metrics["write-records"] : v.metrics["read-records"], atMs);
    if (perSecond !== null) t.throughput.push(perSecond);
    if (typeof f.backpressured === "number") t.backpressured.push(Math.min(1000, Math.max(0, f.backpressured)) / 10);
    return t;
  }

  href(tab, vertex) {
    return `#/jobs/${encodeURIComponent(this.jid)}/${tab}${vertex ? `/${encodeURIComponent(vertex)}` : ""}`;
  }

  mount(container) {
    this.header = h("section", { id: "job-header" });
    this.actionMessage = h("p", { id: "action-message", class: "message", role: "status" });
    this.savepointTarget = h("input", {
      id: "savepoint-target",
      type: "text",
      placeholder: "target directory, e.g. /data/savepoints",
      spellcheck: "false",
      value: sessionStorage.getItem("strom.savepoint-target") || "",
    });
    this.savepointButton = h("button", { id: "savepoint-button", type: "button", onclick: () => this.triggerSavepoint() }, "Trigger savepoint");
    this.cancelArea = h("span", { id: "cancel-area" });
    this.savepointState = h("div", { id: "savepoint-state" });
    this.body = h("section", { id: "job-body" });
    fill(
      container,
      this.header,
      h("section", { class: "actions" }, this.cancelArea, h("span", { class: "savepoint" }, this.savepointTarget, this.savepointButton)),
      this.actionMessage,
      this.savepointState,
      h("nav", { class: "tabs" }, TABS.map(([t, label]) => h("a", { href: this.href(t), class: t === this.tab ? "active" : "", dataset: { tab: t } }, label))),
      this.body,
    );
    this.renderCancel(false);
    this.renderSavepoint();
  }

  async refresh() {
    const details = await get(paths.job(this.jid));
    const terminal = TERMINAL.has(details.state);
    this.renderHeader(details);
    this.renderCancel(terminal);
    this.savepointButton.disabled = terminal;
    await this.pollSavepoints();
    if (this.tab === "checkpoints") await this.refreshCheckpoints();
    else if (this.tab === "exceptions") await this.refreshExceptions();
    else await this.refreshOverview(details);
  }

  // -- header and actions ------------------------------------------------------------------------------------
  renderHeader(d) {
    fill(
      this.header,
      h("h1", null, h("span", { id: "job-name" }, d.name), " ", h("span", { id: "job-state" }, badge(d.state))),
      facts([
        ["Job id", h("code", { id: "job-id" }, d.jid)],
        ["Type", d["job-type"]],
        ["Start time", time(d["start-time"])],
        ["End time", time(d["end-time"])],
        ["Duration", duration(d.duration)],
        ["Max parallelism", count(d.maxParallelism)],
      ], "facts inline"),
    );
  }

  renderCancel(terminal) {
    if (terminal) this.confirming = false;
    const cancel = h("button", { id: "cancel-button", type: "button", class: "danger", disabled: terminal, onclick: () => this.setConfirming(true) }, "Cancel job");
    const confirm = [
      h("span", null, "Cancel this job? "),
      h("button", { id: "cancel-confirm", type: "button", class: "danger", onclick: () => this.cancel() }, "Yes, cancel"),
      h("button", { id: "cancel-abort", type: "button", onclick: () => this.setConfirming(false) }, "No"),
    ];
    if (this.cancelArea.dataset.mode !== (this.confirming ? "confirm" : `button-${terminal}`)) {
      this.cancelArea.dataset.mode = this.confirming ? "confirm" : `button-${terminal}`;
      fill(this.cancelArea, this.confirming ? confirm : cancel);
    }
  }

  setConfirming(on) {
    this.confirming = on;
    this.renderCancel(false);
  }

  say(text, kind = "info") {
    this.actionMessage.className = `message ${kind}`;
    fill(this.actionMessage, text);
  }

  async cancel() {
    this.setConfirming(false);
    try {
      await patch(paths.cancel(this.jid));
      this.say("Cancellation requested; the job's status follows.");
    } catch (err) {
      this.say(`Cancel failed: ${err.message}`, "error");
      if (err instanceof ApiError && (err.status === 0 || err.status === 401) && !token()) document.getElementById("token").focus();
    }
  }

  async triggerSavepoint() {
    const target = this.savepointTarget.value.trim();
    if (!target) {
      this.say("Enter the directory the savepoint goes to.", "error");
      this.savepointTarget.focus();
      return;
    }
    sessionStorage.setItem("strom.savepoint-target", target);
    try {
      const answer = await post(paths.savepoints(this.jid), { "target-directory": target, "cancel-job": false });
      const ops = savepoints.get(this.jid) || [];
      ops.unshift({ trigger: answer["request-id"], target, started: Date.now(), status: "IN_PROGRESS" });
      savepoints.set(this.jid, ops);
      this.say("Savepoint triggered.");
      this.renderSavepoint();
      this.pollSavepoints();
    } catch (err) {
      this.say(`Savepoint failed: ${err.message}`, "error");
    }
  }

  /** Ask once for the status of this job's savepoints still in progress (every poll does). */
  async pollSavepoints() {
    const ops = (savepoints.get(this.jid) || []).filter((op) => op.status === "IN_PROGRESS");
    await Promise.all(
      ops.map(async (op) => {
        try {
          const result = await get(paths.savepoint(this.jid, op.trigger));
          if (result.status.id !== "COMPLETED") return;
          const operation = result.operation || {};
          op.status = operation["failure-cause"] ? "FAILED" : "COMPLETED";
          op.location = operation.location;
          op.failure = operation["failure-cause"];
          op.finished = Date.now();
        } catch (err) {
          op.status = "UNKNOWN";
          op.failure = { class: "", "stack-trace": err.message };
        }
      }),
    );
    this.renderSavepoint();
  }

  renderSavepoint() {
    const ops = savepoints.get(this.jid) || [];
    const rows = ops.map((op) => [
      h("code", null, op.trigger),
      op.target,
      h("span", { class: `badge status-${op.status}` }, op.status),
      op.finished ? duration(op.finished - op.started) : "–",
      op.location ? h("code", { class: "savepoint-location" }, op.location) : op.failure ? h("pre", { class: "trace" }, `${op.failure.class}\n${op.failure["stack-trace"]}`) : "",
    ]);
    fill(this.savepointState, rows.length ? table(["Trigger id", "Target", "Status", "Took", "Location / failure"], rows, { className: "savepoints" }) : "");
  }

  // -- overview tab: the graph and the vertices --------------------------------------------------------------
  async refreshOverview(details) {
    if (!this.plan) this.plan = (await get(paths.plan(this.jid))).plan;
    const running = !TERMINAL.has(details.state);
    const figures = new Map(
      await Promise.all(
        details.vertices.map(async (v) => [v.id, running ? await vertexFigures(this.jid, v.id).catch(() => ({})) : {}]),
      ),
    );
    const selected = details.vertices.find((v) => v.id === this.vertex);
    const sub = selected ? await this.subtasks(selected) : null;
    const byId = new Map(details.vertices.map((v) => [v.id, v]));
    const info = (id) => {
      const v = byId.get(id) || { status: "UNKNOWN", parallelism: 0 };
      const f = figures.get(id) || {};
      return {
        status: v.status,
        lines: [
          { cls: "v-parallelism", text: `Parallelism: ${v.parallelism}` },
          { cls: "v-status", text: `Status: ${v.status}` },
          { cls: "v-shares", text: `Backpressured (max): ${perSecondShare(f.backpressured)} · Busy (max): ${perSecondShare(f.busy)}` },
          { cls: "v-watermark", text: `Low watermark: ${watermark(f.watermark)}` },
        ],
      };
    };
    const select = (vid) => {
      location.hash = this.href("overview", vid === this.vertex ? null : vid);
    };
    const sources = new Set(this.plan.nodes.filter((n) => !(n.inputs || []).length).map((n) => n.id));
    const rows = details.vertices.map((v) => {
      const f = figures.get(v.id) || {};
      const m = v.metrics;
      const t = this.trend(v, running ? f : {}, sources.has(v.id), details.now || Date.now());
      const last = t.throughput.points[t.throughput.points.length - 1];
      return [
        h("a", { href: this.href("overview", v.id), class: "vertex-link" }, v.name),
        count(v.parallelism),
        badge(v.status),
        h("span", { class: "records-in" }, count(m["read-records"])),
        h("span", { class: "records-out" }, count(m["write-records"])),
        bytes(m["read-bytes"]),
        bytes(m["write-bytes"]),
        h("span", { class: "busy" }, perSecondShare(f.busy)),
        h("span", { class: "backpressured" }, perSecondShare(f.backpressured)),
        h("span", { class: "watermark" }, watermark(f.watermark)),
        h(
          "span",
          { class: "throughput", title: `records per second ${sources.has(v.id) ? "out" : "in"}, over the last minute` },
          sparkline(t.throughput.points, { className: "throughput", title: "throughput" }),
          ` ${last === undefined ? "–" : `${count(Math.round(last))}/s`}`,
        ),
        h(
          "span",
          { class: "back-pressure", title: "back-pressured (max over the subtasks), % of time, over the last minute" },
          sparkline(t.backpressured.points, { className: "backpressure", title: "back pressure" }),
        ),
        Object.entries(v.tasks).filter(([, n]) => n > 0).map(([state, n]) => `${state} ${n}`).join(", "),
      ];
    });
    fill(
      this.body,
      h("div", { class: "graph-frame" }, drawGraph(this.plan, info, select, this.vertex)),
      table(
        ["Name", "Parallelism", "Status", "Records received", "Records sent", "Bytes received", "Bytes sent", "Busy (max)", "Backpressured (max)", "Low watermark", "Throughput", "Back pressure", "Tasks"],
        rows,
        { className: "vertices", rowProps: (i) => ({ dataset: { vertexId: details.vertices[i].id }, class: details.vertices[i].id === this.vertex ? "selected" : "" }) },
      ),
      sub,
    );
  }

  async subtasks(v) {
    const [detail, bp, marks] = await Promise.all([
      get(paths.vertex(this.jid, v.id)),
      get(paths.backpressure(this.jid, v.id)).catch(() => ({ subtasks: [] })),
      get(paths.watermarks(this.jid, v.id)).catch(() => []),
    ]);
    const pressure = new Map(bp.subtasks.map((s) => [s.subtask, s]));
    const mark = new Map(marks.map((m) => [Number(m.id.split(".")[0]), m.value]));
    const rows = detail.subtasks.map((st) => {
      const p = pressure.get(st.subtask) || {};
      return [
        count(st.subtask),
        badge(st.status),
        count(st.attempt),
        h("a", { href: `#/taskmanagers/${encodeURIComponent(st["taskmanager-id"])}` }, st["taskmanager-id"]),
        st.endpoint,
        count(st.metrics["read-records"]),
        count(st.metrics["write-records"]),
        ratio(p.busyRatio),
        ratio(p.ratio),
        p.backpressureLevel || "–",
        watermark(mark.get(st.subtask)),
      ];
    });
    return h(
      "section",
      { id: "subtasks" },
      h("h2", null, "Subtasks of ", h("span", { class: "vertex-name" }, v.name)),
      table(["#", "Status", "Attempt", "TaskManager", "Endpoint", "Records received", "Records sent", "Busy", "Backpressured", "Back pressure", "Watermark"], rows, { className: "subtasks" }),
    );
  }

  // -- checkpoints tab ----------------------------------------------------------------------------------------
  async refreshCheckpoints() {
    let stats;
    try {
      stats = await get(paths.checkpoints(this.jid));
      if (!this.checkpointConfig) this.checkpointConfig = await get(paths.checkpointConfig(this.jid));
    } catch (err) {
      if (err instanceof ApiError && err.status === 404) {
        fill(this.body, h("p", { class: "muted empty", id: "no-checkpoints" }, `No checkpoints: ${err.message}`));
        return;
      }
      throw err;
    }
    const c = stats.counts;
    const cfg = this.checkpointConfig;
    const summary = (key, fmt) => {
      const s = stats.summary[key];
      return s ? `${fmt(s.min)} / ${fmt(s.avg)} / ${fmt(s.max)}` : "–";
    };
    const latest = (cp) => (cp ? `#${cp.id} at ${time(cp.latest_ack_timestamp)}, ${bytes(cp.checkpointed_size)}, ${duration(cp.end_to_end_duration)}${cp.external_path ? ` — ${cp.external_path}` : ""}` : "none");
    const rows = stats.history.map((cp) => [
      count(cp.id),
      badge(cp.status),
      cp.checkpoint_type,
      time(cp.trigger_timestamp),
      time(cp.latest_ack_timestamp),
      h("span", { class: "cp-duration" }, duration(cp.end_to_end_duration)),
      h("span", { class: "cp-size" }, bytes(cp.checkpointed_size)),
      bytes(cp.state_size),
      `${cp.num_acknowledged_subtasks} / ${cp.num_subtasks}`,
    ]);
    fill(
      this.body,
      h("h2", null, "Counts"),
      facts([
        ["Triggered", count(c.total)],
        ["In progress", count(c.in_progress)],
        ["Completed", h("span", { id: "cp-completed" }, count(c.completed))],
        ["Failed", count(c.failed)],
        ["Restored", count(c.restored)],
      ], "facts inline"),
      h("h2", null, "Latest"),
      facts([
        ["Completed checkpoint", latest(stats.latest.completed)],
        ["Savepoint", latest(stats.latest.savepoint)],
        ["Failed checkpoint", stats.latest.failed ? `#${stats.latest.failed.id} at ${time(stats.latest.failed.failure_timestamp)}: ${stats.latest.failed.failure_message || ""}` : "none"],
        ["Restored", stats.latest.restored ? `#${stats.latest.restored.id} at ${time(stats.latest.restored.restore_timestamp)}` : "none"],
      ]),
      h("h2", null, "Summary (min / avg / max)"),
      facts([
        ["End to end duration", summary("end_to_end_duration", duration)],
        ["Checkpointed data size", summary("checkpointed_size", bytes)],
        ["Full checkpoint data size", summary("state_size", bytes)],
      ]),
      h("h2", null, "History"),
      this.durationChart(stats.history),
      table(["Id", "Status", "Type", "Triggered", "Latest acknowledgement", "End to end duration", "Checkpointed size", "Full size", "Acknowledged"], rows, {
        empty: "No checkpoint yet.",
        className: "checkpoints",
        rowProps: (i) => ({ dataset: { checkpointId: stats.history[i].id } }),
      }),
      h("h2", null, "Configuration"),
      facts([
        ["Mode", String(cfg.mode).toUpperCase()], // Flink writes "exactly_once"
        ["Interval", duration(cfg.interval)],
        ["Timeout", duration(cfg.timeout)],
        ["Minimum pause", duration(cfg.min_pause)],
        ["Maximum concurrent", count(cfg.max_concurrent)],
        ["Unaligned", cfg.unaligned_checkpoints ? "yes" : "no"],
        ["Externalized", cfg.externalization.enabled ? (cfg.externalization.delete_on_cancellation ? "yes, deleted on cancellation" : "yes, retained on cancellation") : "no"],
        ["State backend", cfg.state_backend],
        ["Checkpoint storage", cfg.checkpoint_storage],
        ["Tolerable failed checkpoints", count(cfg.tolerable_failed_checkpoints)],
      ]),
    );
  }

  /** The end-to-end durations of the completed checkpoints of the history, oldest first. */
  durationChart(history) {
    const done = history.filter((cp) => cp.status === "COMPLETED").sort((a, b) => a.id - b.id);
    if (done.length < 2) return null;
    return h(
      "p",
      { class: "chart", title: "end-to-end duration of each completed checkpoint of the history" },
      sparkline(done.map((cp) => cp.end_to_end_duration), { width: 360, height: 48, className: "checkpoint-durations", title: "checkpoint durations" }),
      h("span", { class: "muted" }, ` end-to-end duration of checkpoints #${done[0].id}–#${done[done.length - 1].id}`),
    );
  }

  // -- exceptions tab -----------------------------------------------------------------------------------------
  async refreshExceptions() {
    const { exceptionHistory } = await get(paths.exceptions(this.jid));
    const entries = exceptionHistory.entries.map((e, i) =>
      h(
        "article",
        { class: "exception", dataset: { index: i } },
        h("h3", null, h("span", { class: "exception-name" }, e.exceptionName), " ", h("span", { class: "muted" }, time(e.timestamp))),
        facts([
          ["Task", e.taskName || "–"],
          ["TaskManager", e.taskManagerId ? h("a", { href: `#/taskmanagers/${encodeURIComponent(e.taskManagerId)}` }, e.taskManagerId) : "–"],
          ["Endpoint", e.endpoint || "–"],
        ], "facts inline"),
        h("pre", { class: "trace stacktrace" }, e.stacktrace),
        e.concurrentExceptions.length ? h("p", { class: "muted" }, `${e.concurrentExceptions.length} concurrent exception(s)`) : null,
      ),
    );
    fill(
      this.body,
      entries.length ? entries : h("p", { class: "muted empty", id: "no-exceptions" }, "No exceptions: the job has not failed."),
      exceptionHistory.truncated ? h("p", { class: "muted" }, "Older exceptions are left out (truncated).") : null,
    );
  }
}
