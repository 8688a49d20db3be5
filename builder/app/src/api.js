// @ts-check
// The Builder's API (`compiler/src/builder/api.rs`). The access token travels in a
// cookie the server set when the printed URL was opened. Every write says it is JSON,
// body or not: the server refuses a write that does not (an HTML form's post).

/** Calls the API; throws an Error with the server's message when it refuses, carrying
 *  the status and the answer (`error.status`, `error.body`). */
export async function api(method, path, body) {
  const response = await fetch(path, {
    method,
    headers: method === "GET" ? {} : { "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
    credentials: "same-origin",
  });
  if (response.status === 204) return null;
  const text = await response.text();
  let json = null;
  try {
    json = text ? JSON.parse(text) : null;
  } catch {
    // Not JSON: reported below.
  }
  if (!response.ok) {
    throw Object.assign(new Error(json?.error?.message ?? `${method} ${path}: ${response.status}`), { status: response.status, body: json });
  }
  return json;
}

/**
 * Long-polls `path` (`?after=` the last cursor) for as long as the page is open. Each
 * answer goes to `onAnswer(answer, after)`, which returns the cursor to ask after next,
 * or `null` to stop. A request that fails (svc restarting, a dropped connection) is asked
 * again a second later.
 * @param {string} path
 * @param {(answer: any, after: any) => any} onAnswer
 */
export async function longPoll(path, onAnswer) {
  let after;
  for (;;) {
    let answer;
    try {
      answer = await api("GET", after === undefined ? path : `${path}?after=${after}`);
    } catch {
      await new Promise((r) => setTimeout(r, 1000));
      continue;
    }
    const next = onAnswer(answer, after);
    if (next === null) return;
    after = next;
  }
}
