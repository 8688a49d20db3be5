// @ts-check
// What `svc dev` does with its server after each change, in the top bar: "Rebuilding"
// while it checks and compiles, then "Serving" and how long the build took, or why the
// change was not built (the last good server keeps answering). Under `svc studio`, which
// runs no server, nothing is shown.

import { longPoll } from "./api.js";

/**
 * Follows the dev loop's reports for as long as the page is open.
 * @param {HTMLElement} host the status element
 * @param {() => void} onServing called when a new server answers (the project is read again)
 */
export function followDevStatus(host, onServing) {
  return longPoll("/api/dev", (report, after) => {
    if (!report.live) {
      host.hidden = true;
      return null;
    }
    // The wait ran out with nothing new: ask again.
    if (report.generation === after) return after;
    show(host, report);
    if (report.phase === "serving") onServing();
    return report.generation;
  });
}

function show(host, report) {
  host.hidden = false;
  host.dataset.phase = report.phase;
  host.setAttribute("aria-busy", report.phase === "building" ? "true" : "false");
  host.textContent = text(report);
  host.title = report.phase === "building" ? `Rebuilding: ${report.detail}` : report.detail;
}

function text(report) {
  switch (report.phase) {
    case "building":
      return report.serving ? "Rebuilding…" : "Building…";
    case "serving":
      return `Serving · ${report.detail}`;
    default:
      return report.serving ? `Not rebuilt: ${report.detail} · serving the last good build` : `Not built: ${report.detail}`;
  }
}
