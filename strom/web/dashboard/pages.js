// The cluster pages: the overview (Flink's /overview and /jobs/overview), the TaskManagers (/taskmanagers,
// /taskmanagers/:id with its metrics and logs) and the JobManager (/jobmanager/config, /metrics, /logs). A page is
// an object with mount(container) once and refresh() on every poll; refresh fetches everything first and then
// replaces its sections, so a poll never shows half.

import { get, paths } from "./api.js";
import { facts, fill, h, table } from "./dom.js";
import { bytes, count, duration, time } from "./format.js";

const TERMINAL = new Set(["FINISHED", "CANCELED", "FAILED"]);

export const badge = (state) => h("span", { class: `badge status-${state}` }, state);

// running jobs count their running tasks, completed ones their finished tasks (a completed job runs none)
function jobRows(jobs, taskState) {
  return jobs.map((j) => [
    h("a", { href: `#/jobs/${encodeURIComponent(j.jid)}`, class: "job-link", dataset: { jid: j.jid } }, j.name),
    h("code", null, j.jid),
    time(j["start-time"]),
    time(j["end-time"]),
    duration(j.duration),
    `${count(j.tasks[taskState])} / ${count(j.tasks.total)}`,
    badge(j.state),
  ]);
}

const jobColumns = (tasks) => ["Job name", "Job id", "Start time", "End time", "Duration", tasks, "Status"];

export class OverviewPage {
  mount(container) {
    this.cards = h("section", { class: "cards", id: "cluster-cards" });
    this.running = h("div", { id: "running-jobs" });
    this.completed = h("div", { id: "completed-jobs" });
    fill(
      container,
      h("h1", null, "Overview"),
      this.cards,
      h("h2", null, "Running jobs"),
      this.running,
      h("h2", null, "Completed jobs"),
      this.completed,
    );
  }

  async refresh() {
    const [overview, jobs] = await Promise.all([get(paths.overview()), get(paths.jobsOverview())]);
    const card = (key, label, value) => h("div", { class: "card", dataset: { key } }, h("span", { class: "value" }, value), h("span", { class: "label" }, label));
    fill(
      this.cards,
      card("taskmanagers", "TaskManagers", count(overview.taskmanagers)),
      card("slots-total", "Slots total", count(overview["slots-total"])),
      card("slots-available", "Slots available", count(overview["slots-available"])),
      card("jobs-running", "Running jobs", count(overview["jobs-running"])),
      card("jobs-finished", "Finished", count(overview["jobs-finished"])),
      card("jobs-cancelled", "Canceled", count(overview["jobs-cancelled"])),
      card("jobs-failed", "Failed", count(overview["jobs-failed"])),
      h("p", { class: "muted version" }, `version ${overview["flink-version"]} (${overview["flink-commit"]})`),
    );
    const newest = (a, b) => b["start-time"] - a["start-time"];
    const running = jobs.jobs.filter((j) => !TERMINAL.has(j.state)).sort(newest);
    const completed = jobs.jobs.filter((j) => TERMINAL.has(j.state)).sort(newest);
    fill(this.running, table(jobColumns("Tasks running"), jobRows(running, "running"), { empty: "No running jobs.", className: "jobs" }));
    fill(this.completed, table(jobColumns("Tasks finished"), jobRows(completed, "finished"), { empty: "No completed jobs.", className: "jobs" }));
  }
}

const tmLink = (id) => h("a", { href: `#/taskmanagers/${encodeURIComponent(id)}`, class: "tm-link" }, id);
const known = (n, fmt = count) => (typeof n === "number" && n >= 0 ? fmt(n) : "unknown");

export class TaskManagersPage {
  mount(container) {
    this.list = h("div", { id: "taskmanagers" });
    fill(container, h("h1", null, "Task Managers"), this.list);
  }

  async refresh() {
    const { taskmanagers } = await get(paths.taskManagers());
    const now = Date.now();
    const rows = taskmanagers.map((tm) => [
      tmLink(tm.id),
      h("code", null, tm.path),
      String(tm.dataPort),
      count(tm.slotsNumber),
      count(tm.freeSlots),
      `${duration(Math.max(0, now - tm.timeSinceLastHeartbeat))} ago`,
      known(tm.hardware && tm.hardware.cpuCores),
      tm.blocked ? "yes" : "no",
    ]);
    const columns = ["Id", "Path", "Data port", "Slots", "Free slots", "Last heartbeat", "CPU cores", "Blocked"];
    fill(this.list, table(columns, rows, { empty: "No TaskManager is registered.", className: "taskmanagers" }));
  }
}

/** The end of a log shown in the page; the whole file is behind its link. */
const LOG_TAIL_CHARS = 200_000;

/** A process's log files (a TaskManager's or the JobManager's): the listing, and one file shown on demand.
 * `fileUrl(name)` is the file's REST path; `prefix` names the sections (`tm` / `jm`); `empty` is said with no file. */
class LogFiles {
  constructor(fileUrl, prefix, empty) {
    this.fileUrl = fileUrl;
    this.prefix = prefix;
    this.empty = empty;
    this.list = h("section", { id: `${prefix}-logs` });
    this.view = h("section", { id: `${prefix}-log-view` });
  }

  /** Fetch a log file once (not on every poll: it may be large) and show its end; `url` if not a listed file's. */
  async show(name, url = this.fileUrl(name)) {
    fill(this.view, h("p", { class: "muted" }, `Loading ${name}…`));
    let text;
    try {
      const response = await fetch(url, { cache: "no-store" });
      text = await response.text();
      if (!response.ok) throw new Error(`${response.status}: ${text}`);
    } catch (err) {
      fill(this.view, h("p", { class: "message error" }, `Could not read ${name}: ${err.message}`));
      return;
    }
    const cut = text.length > LOG_TAIL_CHARS;
    fill(
      this.view,
      h("h3", null, name, cut ? ` (the last ${LOG_TAIL_CHARS.toLocaleString("en-US")} characters)` : ""),
      h("pre", { class: "trace log-text", dataset: { name } }, cut ? text.slice(-LOG_TAIL_CHARS) : text || "(empty)"),
    );
  }

  /** Replace the listing with `logs` (Flink's LogListInfo.logs). */
  render(logs) {
    const rows = (logs || []).map((log) => [
      h("a", { href: this.fileUrl(log.name), target: "_blank", rel: "noopener" }, log.name),
      bytes(log.size),
      time(log.mtime),
      h("button", { type: "button", class: "show-log", dataset: { name: log.name }, onclick: () => this.show(log.name) }, "Show"),
    ]);
    fill(this.list, table(["File", "Size", "Modified", ""], rows, { empty: this.empty, className: `${this.prefix}-logs` }));
  }
}

export class TaskManagerPage {
  constructor(tmid) {
    this.tmid = tmid;
    this.logs = new LogFiles(
      (name) => paths.taskManagerLog(tmid, name),
      "tm",
      "The REST API lists no log files for this TaskManager (GET /taskmanagers/:id/logs is empty).",
    );
  }

  mount(container) {
    this.info = h("section", { id: "tm-info" });
    this.slots = h("section", { id: "tm-slots" });
    this.metrics = h("section", { id: "tm-metrics" });
    fill(
      container,
      h("p", null, h("a", { href: "#/taskmanagers" }, "← Task Managers")),
      h("h1", null, "TaskManager ", h("code", null, this.tmid)),
      this.info,
      h("h2", null, "Allocated slots"),
      this.slots,
      h("h2", null, "Metrics"),
      this.metrics,
      h("h2", null, "Logs"),
      this.logs.list,
      h(
        "p",
        null,
        h("button", { type: "button", id: "tm-show-stdout", onclick: () => this.logs.show("Stdout", paths.taskManagerStdout(this.tmid)) }, "Show stdout"),
        h("span", { class: "muted" }, " what the job's print() wrote on this TaskManager"),
      ),
      this.logs.view,
    );
  }

  async refresh() {
    const [tm, metricIds, logs] = await Promise.all([
      get(paths.taskManager(this.tmid)),
      get(paths.taskManagerMetrics(this.tmid)),
      get(paths.taskManagerLogs(this.tmid)),
    ]);
    const ids = metricIds.map((m) => m.id);
    const values = ids.length ? await get(paths.taskManagerMetrics(this.tmid, ids)) : [];
    const hw = tm.hardware || {};
    fill(
      this.info,
      facts([
        ["Path", h("code", null, tm.path)],
        ["Data port", String(tm.dataPort)],
        ["Slots", `${count(tm.freeSlots)} free of ${count(tm.slotsNumber)}`],
        ["Last heartbeat", `${time(tm.timeSinceLastHeartbeat)} (${duration(Math.max(0, Date.now() - tm.timeSinceLastHeartbeat))} ago)`],
        ["CPU cores", known(hw.cpuCores)],
        ["Physical memory", known(hw.physicalMemory, bytes)],
        ["Free memory", known(hw.freeMemory, bytes)],
        ["Managed memory", known(hw.managedMemory, bytes)],
        ["Blocked", tm.blocked ? "yes" : "no"],
      ]),
    );
    const slotRows = (tm.allocatedSlots || []).map((slot) => [
      h("a", { href: `#/jobs/${encodeURIComponent(slot.jobId)}` }, h("code", null, slot.jobId)),
      JSON.stringify(slot.resource || {}),
    ]);
    fill(this.slots, table(["Job", "Resource"], slotRows, { empty: "No slot of this TaskManager is allocated." }));
    fill(
      this.metrics,
      table(["Metric", "Value"], values.map((m) => [m.id, m.value]), {
        empty: "The REST API reports no metrics for this TaskManager (GET /taskmanagers/:id/metrics is empty).",
        className: "tm-metrics",
      }),
    );
    this.logs.render(logs.logs);
  }
}

export class JobManagerPage {
  constructor() {
    this.logs = new LogFiles(
      (name) => paths.jobManagerLog(name),
      "jm",
      "The REST API lists no log files for the JobManager (GET /jobmanager/logs is empty): it writes none, as a " +
        "MiniCluster's JobManager in the client's process.",
    );
  }

  mount(container) {
    this.metrics = h("section", { id: "jm-metrics" });
    this.config = h("section", { id: "jm-config" });
    fill(
      container,
      h("h1", null, "Job Manager"),
      h("h2", null, "Metrics"),
      this.metrics,
      h("h2", null, "Configuration"),
      this.config,
      h("h2", null, "Logs"),
      this.logs.list,
      this.logs.view,
    );
  }

  async refresh() {
    const [config, metricIds, logs] = await Promise.all([
      get(paths.jobManagerConfig()),
      get(paths.jobManagerMetrics()),
      get(paths.jobManagerLogs()),
    ]);
    const ids = metricIds.map((m) => m.id);
    const values = ids.length ? await get(paths.jobManagerMetrics(ids)) : [];
    fill(
      this.metrics,
      table(["Metric", "Value"], values.map((m) => [m.id, m.value]), {
        empty: "The REST API reports no metrics for the JobManager.",
        className: "jm-metrics",
      }),
    );
    fill(
      this.config,
      table(["Key", "Value"], config.map((e) => [h("code", null, e.key), e.value]), {
        empty: "No option is set: the JobManager runs with the defaults.",
        className: "jm-config",
      }),
    );
    this.logs.render(logs.logs);
  }
}
