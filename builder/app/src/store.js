// @ts-check
// The one owner of the project as the page knows it: the model last read, its revision,
// and the readings under way. Every reading goes through `apply`, which decides whether
// it is shown; the views draw what `apply` hands them and keep no project state.
//
// The project is read when its files change (`/api/project/revision`, long-polled: the
// server answers when the revision is not the one the page has), after each write of
// this Builder, and when `svc dev` serves a new build.

import { api, longPoll } from "./api.js";

/** @typedef {import("./model").Model} Model */

/**
 * What `apply` made of a reading: `stale` (begun before a write of this Builder, or
 * older than the one shown: dropped), `same` (the revision shown), `changed` (the new
 * model is the store's now).
 * @typedef {"stale" | "same" | "changed"} Applied
 */

export class ProjectStore {
  /**
   * @param {(model: Model, applied: Applied) => void | Promise<void>} onReading called with every reading not stale
   * @param {(message: string) => void} onError called when the project cannot be read
   */
  constructor(onReading, onError) {
    this.onReading = onReading;
    this.onError = onError;
    /** @type {Model | null} */
    this.model = null;
    // Readings of the project: how many were begun, the newest shown, and the newest
    // begun before this Builder's last write.
    this.readings = 0;
    this.shownReading = 0;
    this.staleUpTo = 0;
    // A revision seen while the tab was hidden: read when it is shown again.
    this.missed = false;
    document.addEventListener("visibilitychange", () => {
      if (document.visibilityState === "visible" && this.missed) {
        this.missed = false;
        this.read().catch(() => {});
      }
    });
  }

  /** Reads the project and applies the reading. */
  async read() {
    const reading = ++this.readings;
    /** @type {Model} */
    let model;
    try {
      model = await api("GET", "/api/project");
    } catch (e) {
      this.onError(e instanceof Error ? e.message : String(e));
      return "stale";
    }
    return this.apply(reading, model);
  }

  /**
   * Takes reading number `reading`. Readings overlap (a change on disk, svc dev's
   * "serving", each save's) and can answer out of order: one begun before a write of
   * this Builder, or older than the one on screen, would put an older file back, and an
   * edit made from that form would be refused as a conflict with the Builder's own write.
   * @param {number} reading
   * @param {Model} model
   * @returns {Promise<Applied>}
   */
  async apply(reading, model) {
    if (reading <= this.staleUpTo || reading < this.shownReading) return "stale";
    this.shownReading = reading;
    /** @type {Applied} */
    const applied = this.model && this.model.revision === model.revision ? "same" : "changed";
    if (applied === "changed") this.model = model;
    await this.onReading(this.model ?? model, applied);
    return applied;
  }

  /** This Builder wrote a file: the readings begun before answer with the file as it was. */
  wrote() {
    this.staleUpTo = this.readings;
  }

  /** Reads the project again whenever its revision changes, for as long as the page is
   *  open; a hidden tab reads when it is shown again. */
  follow() {
    longPoll("/api/project/revision", (answer, after) => {
      const revision = answer.revision;
      if (revision !== after && revision !== this.model?.revision) {
        if (document.visibilityState === "visible") this.read().catch(() => {});
        else this.missed = true;
      }
      return revision;
    });
  }
}
