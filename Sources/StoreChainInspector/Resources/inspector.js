// The inspector's page: plain JavaScript over the inspector's JSON API, no build step.
"use strict";

let token = null;

const $ = (id) => document.getElementById(id);
const element = (tag, attributes = {}, ...children) => {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attributes)) {
    if (key === "class") node.className = value;
    else if (key.startsWith("data-")) node.setAttribute(key, value);
    else node[key] = value;
  }
  for (const child of children) node.append(child);
  return node;
};

async function api(path, body) {
  const options = body === undefined ? {} : {
    method: "POST",
    headers: { "Content-Type": "application/json", "X-StoreChain-Token": token },
    body: JSON.stringify(body),
  };
  const response = await fetch(path, options);
  return response.json();
}

// The pipeline: each handler in order, then the terminal; a click shows its options.
async function showPipeline() {
  const view = await api("/api/pipeline");
  $("source").textContent = view.source || "";
  const row = $("pipeline");
  row.replaceChildren();
  const stages = [...view.stages, { ...view.terminal, terminal: true }];
  stages.forEach((stage, index) => {
    const scope = [stage.kinds && `kinds: ${stage.kinds.join(", ")}`, stage.entities && `entities: ${stage.entities.join(", ")}`]
      .filter(Boolean).join("; ");
    const box = element("div", { class: stage.terminal ? "stage terminal" : "stage", "data-type": stage.type },
      element("span", { class: "type", textContent: stage.type }));
    if (scope) box.append(element("span", { class: "scope", textContent: scope }));
    if (stage.line) box.title = `line ${stage.line}`;
    box.addEventListener("click", () => {
      const options = $("stage-options");
      options.textContent = stage.text || "(no options)";
      options.hidden = false;
    });
    row.append(box);
    if (index < stages.length - 1) row.append(element("span", { class: "arrow", textContent: "→" }));
  });
}

// One span as a line of the waterfall: what it was and what it says.
function describe(span) {
  const a = span.attributes;
  if (span.kind === "client") {
    const status = a["http.response.status_code"] || "failed";
    const bytes = a["http.response.body.size"];
    return { kind: "http", text: `${span.name} ${a["url.full"] || ""} → ${status}` + (bytes ? ` · ${bytes} B` : "") };
  }
  if (span.name === "inspector.query") return { kind: "query", text: `query ${a["storechain.entity"] || ""}` };
  if (span.name.startsWith("storechain.") && a["storechain.answered_by"] !== undefined) {
    const what = span.name.slice("storechain.".length);
    const subject = a["storechain.object"] || a["storechain.entity"] || "";
    const details = [`answered by ${a["storechain.answered_by"]}`];
    if (a["storechain.page"]) details.push(`page ${a["storechain.page"]}`);
    if (a["storechain.exchanges"] && a["storechain.exchanges"] !== "0") details.push(`${a["storechain.exchanges"]} exchange(s)`);
    return { kind: "request", status: a["storechain.cache.status"], text: `${what} ${subject} · ${details.join(" · ")}` };
  }
  return { kind: "work", text: span.name.replace(/^storechain\./, "") };
}

// Spans as a tree (a sub-request under the request it serves), each with a bar in time.
function showWaterfall(list, spans) {
  list.replaceChildren();
  if (spans.length === 0) return;
  const children = new Map();
  const ids = new Set(spans.map((span) => span.id));
  for (const span of spans) {
    const parent = ids.has(span.parent) ? span.parent : null;
    if (!children.has(parent)) children.set(parent, []);
    children.get(parent).push(span);
  }
  const start = Math.min(...spans.map((span) => span.start));
  const end = Math.max(...spans.map((span) => span.end));
  const total = Math.max(1, end - start);
  const add = (span, depth) => {
    const { kind, status, text } = describe(span);
    const milliseconds = ((span.end - span.start) / 1e6).toFixed(1);
    const label = element("span", { class: "label", title: text },
      element("span", { textContent: "\u00a0\u00a0".repeat(depth) + text }));
    if (status) label.append(element("span", { class: `badge ${status}`, textContent: status }));
    if (kind === "http") label.append(element("span", { class: "badge http", textContent: "HTTP" }));
    label.append(element("span", { textContent: ` ${milliseconds} ms` }));
    const bar = element("span", { class: "bar" });
    bar.style.left = `${((span.start - start) / total) * 100}%`;
    bar.style.width = `${((span.end - span.start) / total) * 100}%`;
    const attributes = { class: span.failed ? "failed" : "", "data-kind": kind };
    if (status) attributes["data-status"] = status;
    list.append(element("li", attributes, label, element("span", { class: "track" }, bar)));
    for (const child of children.get(span.id) || []) add(child, depth + 1);
  };
  for (const root of children.get(null) || []) add(root, 0);
}

function showTable(answer) {
  const table = $("results");
  table.replaceChildren();
  if (answer.count !== undefined && answer.count !== null) {
    table.append(element("tr", {}, element("th", { textContent: "count" })),
      element("tr", {}, element("td", { textContent: String(answer.count) })));
    return;
  }
  table.append(element("tr", {}, ...answer.columns.map((name) => element("th", { textContent: name }))));
  for (const row of answer.rows) table.append(element("tr", {}, ...row.map((value) => element("td", { textContent: value }))));
}

async function runQuery(event) {
  event.preventDefault();
  const number = (id) => ($(id).value === "" ? undefined : Number($(id).value));
  const input = {
    entity: $("entity").value.trim(), predicate: $("predicate").value, sort: $("sort").value,
    limit: number("limit"), offset: number("offset"), policy: $("policy").value,
  };
  $("run").disabled = true;
  const answer = await api("/api/query", input);
  $("run").disabled = false;
  const error = $("error");
  error.hidden = !answer.error;
  error.textContent = answer.error ? answer.error + (answer.suggestion ? `\n${answer.suggestion}` : "") : "";
  const exchanges = answer.spans.filter((span) => span.kind === "client").length;
  $("summary").textContent = answer.error ? "" :
    `${answer.count ?? answer.rows.length} ${answer.count !== undefined && answer.count !== null ? "counted" : "row(s)"}` +
    ` · ${answer.cacheStatus || "no cache"} · answered by ${answer.answeredBy} · ${exchanges} HTTP exchange(s)` +
    ` · ${answer.milliseconds.toFixed(1)} ms`;
  $("summary").dataset.exchanges = String(exchanges);
  $("summary").dataset.status = answer.cacheStatus || "";
  showTable(answer);
  showWaterfall($("waterfall"), answer.spans);
  $("explanation").replaceChildren(...answer.explanation.map((line) => element("li", { textContent: line })));
  showCaches();
  showOutbox();
  showRateLimits();
}

async function showCaches() {
  const caches = await api("/api/caches");
  const box = $("caches");
  box.replaceChildren();
  if (caches.length === 0) box.append(element("p", { class: "hint", textContent: "No cache in this chain can be looked into." }));
  for (const cache of caches) {
    const clear = element("button", { type: "button", textContent: "Clear", class: "clear" });
    clear.addEventListener("click", () => clearCaches(cache.name));
    const entities = Object.entries(cache.objectsByEntity).sort();
    const table = element("table", {},
      element("tr", {}, element("th", { textContent: "entity" }), element("th", { textContent: "objects" }),
        element("th", { textContent: "whole collection" }), element("th", {})),
      ...entities.map(([entity, count]) => {
        const forget = element("button", { type: "button", textContent: "Forget", class: "forget" });
        forget.addEventListener("click", () => forgetEntity(cache.name, entity));
        return element("tr", { "data-entity": entity },
          element("td", { textContent: entity }), element("td", { class: "objects", textContent: String(count) }),
          element("td", { textContent: cache.collections.includes(entity) ? "yes" : "" }), element("td", {}, forget));
      }));
    box.append(element("div", { class: "cache", "data-cache": cache.name },
      element("h4", {}, element("span", { textContent: cache.name }), element("span", { class: "location", textContent: cache.location }), clear),
      element("p", { class: "hint", textContent: `${cache.queries} stored queries · ${cache.expired} expired · ${cache.bytes} bytes` + (cache.error ? ` · ${cache.error}` : "") }),
      table));
  }
}

async function clearCaches(name) {
  await api("/api/caches/clear", name ? { cache: name } : {});
  showCaches();
}

// Removes an entity's objects, collection and queries from one cache.
async function forgetEntity(cache, entity) {
  const answer = await api("/api/caches/forget", { cache, entity });
  $("cache-message").textContent = answer.error ||
    Object.entries(answer.forgotten).map(([name, count]) => `${name}: forgot ${count} ${entity} object(s)`).join(" · ");
  showCaches();
}

// The saves each outbox holds, with retry and discard.
async function showOutbox() {
  const outboxes = await api("/api/outbox");
  const box = $("outbox");
  box.replaceChildren();
  if (outboxes.length === 0) box.append(element("p", { class: "hint", textContent: "This chain has no outbox." }));
  for (const outbox of outboxes) {
    const list = element("ol", { class: "entries" });
    for (const entry of outbox.entries) {
      const retry = element("button", { type: "button", textContent: "Retry", class: "retry" });
      retry.addEventListener("click", () => outboxAction("retry", outbox.name, entry.id));
      const discard = element("button", { type: "button", textContent: "Discard", class: "discard" });
      discard.addEventListener("click", () => outboxAction("discard", outbox.name, entry.id));
      const facts = [`#${entry.id} ${entry.kind}`, entry.state, `${entry.attempts} attempt(s)`,
        new Date(entry.created * 1000).toLocaleTimeString()];
      list.append(element("li", { "data-entry": String(entry.id), "data-state": entry.state },
        element("span", { class: `badge ${entry.state}`, textContent: entry.state }),
        element("span", { textContent: ` ${facts.join(" · ")} ` }), retry, discard,
        ...entry.changes.map((line) => element("div", { class: "change", textContent: line })),
        ...(entry.lastError ? [element("div", { class: "error-line", textContent: entry.lastError })] : [])));
    }
    if (outbox.entries.length === 0) list.append(element("li", { class: "hint", textContent: "Nothing waiting." }));
    box.append(element("div", { class: "outbox", "data-outbox": outbox.name },
      element("h4", { textContent: outbox.name }), ...(outbox.error ? [element("p", { class: "error", textContent: outbox.error })] : []), list));
  }
}

async function outboxAction(action, outbox, id) {
  const answer = await api(`/api/outbox/${action}`, { outbox, id });
  $("outbox-message").textContent = answer.error || answer.done;
  $("outbox-message").dataset.action = action;
  await showOutbox();
}

// Each rate limiter: its limits, what is in flight and waiting, when the next request may start.
async function showRateLimits() {
  const limits = await api("/api/rate-limits");
  const table = $("rate-limits");
  table.replaceChildren();
  if (limits.length === 0) {
    table.append(element("tr", {}, element("td", { class: "hint", textContent: "This chain has no rate limiter." })));
    return;
  }
  const headings = ["handler", "rate", "burst", "in flight", "waiting", "free now", "next start", "paused", "backend says"];
  table.append(element("tr", {}, ...headings.map((name) => element("th", { textContent: name }))));
  for (const limit of limits) {
    const backend = limit.backendRemaining === undefined || limit.backendRemaining === null ? "" :
      `${limit.backendRemaining} left, resets in ${(limit.backendResetIn / 1000).toFixed(0)} s`;
    const cells = [limit.name, `${limit.rate}/s`, String(limit.burst),
      `${limit.inFlight}${limit.maxInFlight ? ` of ${limit.maxInFlight}` : ""}`, String(limit.waiting),
      String(limit.available), limit.nextStartIn > 0 ? `in ${limit.nextStartIn.toFixed(0)} ms` : "now",
      limit.pausedFor ? `${(limit.pausedFor / 1000).toFixed(1)} s more` : "", backend];
    table.append(element("tr", { "data-limiter": limit.name }, ...cells.map((text) => element("td", { textContent: text }))));
  }
}

// A request the chain served, at the top of the list; one the console ran opens its waterfall.
function showRequest(request) {
  const details = [request.kind, request.subject, request.answeredBy && `answered by ${request.answeredBy}`,
    `${request.exchanges} HTTP`, `${((request.end - request.start) / 1e6).toFixed(1)} ms`].filter(Boolean);
  const item = element("li", { "data-kind": request.kind },
    `${new Date(request.start / 1e6).toLocaleTimeString()} ${details.join(" · ")}`);
  if (request.cacheStatus) item.append(element("span", { class: `badge ${request.cacheStatus}`, textContent: request.cacheStatus }));
  if (request.failed) item.classList.add("failed");
  if (request.spans) {
    item.classList.add("traced");
    item.title = "Show what the chain did";
    item.addEventListener("click", () => showWaterfall($("waterfall"), request.spans));
  }
  $("requests").prepend(item);
}

async function start() {
  token = (await api("/api/session")).token;
  $("query").addEventListener("submit", runQuery);
  $("clear-all").addEventListener("click", () => clearCaches(null));
  await Promise.all([showPipeline(), showCaches(), showOutbox(), showRateLimits()]);
  for (const request of (await api("/api/requests")).reverse()) showRequest(request);
  const live = new EventSource("/api/live");
  live.addEventListener("request", (event) => showRequest(JSON.parse(event.data)));
  setInterval(() => { showOutbox(); showRateLimits(); }, 2000);
  document.body.dataset.ready = "true";
}

start();
