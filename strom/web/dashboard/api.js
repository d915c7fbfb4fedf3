// The REST API, read with relative paths (the page is served at the API's root, so a proxy may mount both under
// a prefix). Calls that change a job send the token the user typed; it lives in this tab's sessionStorage only.

const TOKEN_KEY = "strom.rest-token";

export class ApiError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

async function call(method, path, { body, auth = false } = {}) {
  const headers = { Accept: "application/json" };
  if (body !== undefined) headers["Content-Type"] = "application/json";
  if (auth) {
    const value = token();
    if (!value) throw new ApiError(0, "enter the cluster's REST token first (strom cluster token prints it)");
    headers.Authorization = `Bearer ${value}`;
  }
  let response;
  try {
    response = await fetch(path, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      cache: "no-store",
    });
  } catch (err) {
    throw new ApiError(0, `the REST API does not answer (${err.message})`);
  }
  const text = await response.text();
  let data = null;
  try {
    data = text ? JSON.parse(text) : null;
  } catch {
    data = null;
  }
  if (!response.ok) {
    const errors = data && Array.isArray(data.errors) ? data.errors.join("; ") : response.statusText;
    throw new ApiError(response.status, `${response.status}: ${errors}`);
  }
  return data;
}

export const get = (path) => call("GET", path);
export const patch = (path, body) => call("PATCH", path, { body, auth: true });
export const post = (path, body) => call("POST", path, { body, auth: true });

export function token() {
  return sessionStorage.getItem(TOKEN_KEY) || "";
}

export function setToken(value) {
  if (value) sessionStorage.setItem(TOKEN_KEY, value);
  else sessionStorage.removeItem(TOKEN_KEY);
}

const seg = encodeURIComponent;

/** Flink's REST paths, relative to the page. */
export const paths = {
  overview: () => "overview",
  jobsOverview: () => "jobs/overview",
  job: (jid) => `jobs/${seg(jid)}`,
  plan: (jid) => `jobs/${seg(jid)}/plan`,
  exceptions: (jid) => `jobs/${seg(jid)}/exceptions`,
  checkpoints: (jid) => `jobs/${seg(jid)}/checkpoints`,
  checkpointConfig: (jid) => `jobs/${seg(jid)}/checkpoints/config`,
  cancel: (jid) => `jobs/${seg(jid)}?mode=cancel`,
  savepoints: (jid) => `jobs/${seg(jid)}/savepoints`,
  savepoint: (jid, trigger) => `jobs/${seg(jid)}/savepoints/${seg(trigger)}`,
  vertex: (jid, vid) => `jobs/${seg(jid)}/vertices/${seg(vid)}`,
  vertexShares: (jid, vid) =>
    `jobs/${seg(jid)}/vertices/${seg(vid)}/subtasks/metrics?get=busyTimeMsPerSecond,backPressuredTimeMsPerSecond`,
  backpressure: (jid, vid) => `jobs/${seg(jid)}/vertices/${seg(vid)}/backpressure`,
  watermarks: (jid, vid) => `jobs/${seg(jid)}/vertices/${seg(vid)}/watermarks`,
  taskManagers: () => "taskmanagers",
  taskManager: (tmid) => `taskmanagers/${seg(tmid)}`,
  taskManagerMetrics: (tmid, ids) =>
    `taskmanagers/${seg(tmid)}/metrics${ids ? `?get=${ids.map(seg).join(",")}` : ""}`,
  taskManagerLogs: (tmid) => `taskmanagers/${seg(tmid)}/logs`,
  taskManagerLog: (tmid, name) => `taskmanagers/${seg(tmid)}/logs/${seg(name)}`,
  taskManagerStdout: (tmid) => `taskmanagers/${seg(tmid)}/stdout`,
  jobManagerConfig: () => "jobmanager/config",
  jobManagerMetrics: (ids) => `jobmanager/metrics${ids ? `?get=${ids.map(seg).join(",")}` : ""}`,
  jobManagerLogs: () => "jobmanager/logs",
  jobManagerLog: (name) => `jobmanager/logs/${seg(name)}`,
};
