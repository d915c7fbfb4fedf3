// The dashboard's entry point: a hash router (#/overview, #/jobs/<id>/<tab>[/<vertex>], #/taskmanagers[/<id>],
// #/jobmanager)
// and the poll loop. The current page is refreshed every REFRESH_MS after the previous refresh ended, so a slow
// answer never stacks requests; changing the route mounts a new page and refreshes it at once.

import { setToken, token } from "./api.js";
import { JobPage } from "./job_page.js";
import { JobManagerPage, OverviewPage, TaskManagerPage, TaskManagersPage } from "./pages.js";
import { fill } from "./dom.js";
import { time } from "./format.js";

const REFRESH_MS = 1000;

const main = document.getElementById("main");
const refreshState = document.getElementById("refresh-state");
let page = null;
let timer = null;
let generation = 0;

function pageFor(hash) {
  const parts = hash.replace(/^#\/?/, "").split("/").filter(Boolean).map(decodeURIComponent);
  if (parts[0] === "jobs" && parts[1]) return { nav: "overview", page: new JobPage(parts[1], parts[2], parts[3]) };
  if (parts[0] === "taskmanagers" && parts[1]) return { nav: "taskmanagers", page: new TaskManagerPage(parts[1]) };
  if (parts[0] === "taskmanagers") return { nav: "taskmanagers", page: new TaskManagersPage() };
  if (parts[0] === "jobmanager") return { nav: "jobmanager", page: new JobManagerPage() };
  return { nav: "overview", page: new OverviewPage() };
}

async function tick(gen) {
  try {
    await page.refresh();
    if (gen !== generation) return;
    refreshState.className = "ok";
    fill(refreshState, `updated ${time(Date.now()).slice(11, 19)}`);
    document.body.dataset.refreshes = String(Number(document.body.dataset.refreshes || 0) + 1);
  } catch (err) {
    if (gen !== generation) return;
    refreshState.className = "error";
    fill(refreshState, `not updated: ${err.message}`);
  } finally {
    if (gen === generation) timer = setTimeout(() => tick(gen), REFRESH_MS);
  }
}

function route() {
  clearTimeout(timer);
  generation += 1;
  const { nav, page: next } = pageFor(location.hash);
  for (const link of document.querySelectorAll("header nav a")) {
    link.classList.toggle("active", link.dataset.nav === nav);
  }
  page = next;
  page.mount(main);
  tick(generation);
}

function showToken() {
  const state = document.getElementById("token-state");
  state.className = token() ? "ok" : "muted";
  fill(state, token() ? "token set for this tab" : "no token: cancel and savepoint need it");
}

document.getElementById("token-form").addEventListener("submit", (event) => {
  event.preventDefault();
  const input = document.getElementById("token");
  setToken(input.value.trim());
  input.value = "";
  showToken();
});
document.getElementById("token-clear").addEventListener("click", () => {
  setToken("");
  showToken();
});

window.addEventListener("hashchange", route);
showToken();
route();
