// The Falkon dashboard: one status document a second from /events (server-sent events), kept for
// ten minutes and drawn with uPlot. Names that peers chose (executor ids, instance names) are only
// ever put in the page as text, never as markup.
'use strict';

const KEEP_SECONDS = 600;
// The time axis spans at least this much, ending at the last sample: with one sample uPlot pads a
// time scale by a day of milliseconds (years, in seconds), which is the range it would hand us.
const MIN_SPAN_SECONDS = 60;

function timeRange(u, min, max) {
  const t = u.data[0];
  if (!t || t.length === 0) {
    return [min, max];
  }
  const last = t[t.length - 1];
  return [Math.min(t[0], last - MIN_SPAN_SECONDS), last];
}
const data = {
  t: [], queued: [], waiting: [], running: [], rate: [], registered: [], busy: [], suspended: [],
  local: [], peer: [], store: [], requested: [], active: [], released: [],
};
let previous = null;
const charts = {};

function chart(id, labels, colors) {
  const el = document.getElementById(id);
  const opts = {
    width: 460, height: 200,
    series: [{}].concat(labels.map((label, i) => ({ label, stroke: colors[i], width: 2 }))),
    scales: { x: { time: true, range: timeRange } },
    axes: [{}, { size: 60 }],
    legend: { live: false },
  };
  charts[id] = new uPlot(opts, [[]].concat(labels.map(() => [])), el);
}

function setFigure(id, value, text) {
  const el = document.getElementById(id);
  el.dataset.value = String(value);
  el.textContent = text === undefined ? value.toLocaleString('en-US') : text;
}

function row(cells) {
  const tr = document.createElement('tr');
  for (const c of cells) {
    const td = document.createElement('td');
    if (c instanceof Node) {
      td.appendChild(c);
    } else {
      td.textContent = String(c);
    }
    tr.appendChild(td);
  }
  return tr;
}

function progress(done, total) {
  const bar = document.createElement('div');
  bar.className = 'bar';
  const fill = document.createElement('div');
  fill.style.width = (total > 0 ? Math.round(100 * done / total) : 0) + '%';
  bar.appendChild(fill);
  return bar;
}

function fill(tableId, rows) {
  const body = document.querySelector('#' + tableId + ' tbody');
  body.replaceChildren(...rows);
}

function perSecond(now, before, dt) {
  return dt > 0 && before !== undefined ? Math.max(0, (now - before) / dt) : 0;
}

function allocations(status) {
  const counts = { requested: 0, active: 0, released: 0 };
  const p = status.provisioner;
  if (!p || !Array.isArray(p.allocations)) {
    return null;
  }
  for (const a of p.allocations) {
    if (a.stage === 'requested' || a.stage === 'queued') counts.requested += a.nodes;
    else if (a.stage === 'released') counts.released += a.nodes;
    else counts.active += a.nodes;
  }
  return counts;
}

function update(s) {
  const busy = s.executorList.filter((e) => e.running > 0).length;
  const suspended = s.executors.suspended;
  const dt = previous ? s.uptimeSeconds - previous.uptimeSeconds : 0;
  const rate = previous ? perSecond(s.completed, previous.completed, dt) : 0;

  document.getElementById('dispatcher').textContent = s.dispatcherId;
  document.getElementById('policy').textContent = s.policy;
  setFigure('uptime', s.uptimeSeconds, Math.round(s.uptimeSeconds) + ' s');
  setFigure('queued', s.queued);
  setFigure('waiting', s.waiting || 0);
  setFigure('running', s.running);
  setFigure('completed', s.completed);
  setFigure('failed', s.failed);
  setFigure('throughput', Math.round(rate));
  setFigure('executors-registered', s.executors.registered);
  setFigure('executors-busy', busy);
  setFigure('executors-idle', Math.max(0, s.executors.registered - busy - suspended));
  setFigure('executors-suspended', suspended);
  setFigure('instances', s.instances);

  const t = Date.now() / 1000;
  data.t.push(t);
  data.queued.push(s.queued);
  data.waiting.push(s.waiting || 0);
  data.running.push(s.running);
  data.rate.push(rate);
  data.registered.push(s.executors.registered);
  data.busy.push(busy);
  data.suspended.push(suspended);
  data.local.push(previous ? perSecond(s.data.localHits, previous.data.localHits, dt) : 0);
  data.peer.push(previous ? perSecond(s.data.peerHits, previous.data.peerHits, dt) : 0);
  data.store.push(previous ? perSecond(s.data.misses, previous.data.misses, dt) : 0);
  const alloc = allocations(s);
  data.requested.push(alloc ? alloc.requested : null);
  data.active.push(alloc ? alloc.active : null);
  data.released.push(alloc ? alloc.released : null);
  while (data.t.length > 1 && data.t[0] < t - KEEP_SECONDS) {
    for (const k of Object.keys(data)) data[k].shift();
  }
  document.getElementById('allocations-note').hidden = alloc !== null;

  charts['chart-tasks'].setData([data.t, data.queued, data.waiting, data.running]);
  charts['chart-throughput'].setData([data.t, data.rate]);
  charts['chart-executors'].setData([data.t, data.registered, data.busy, data.suspended]);
  charts['chart-allocations'].setData([data.t, data.requested, data.active, data.released]);
  charts['chart-data'].setData([data.t, data.local, data.peer, data.store]);

  fill('instances-table', s.instanceList.map((i) => {
    const total = i.completed + i.queued + (i.waiting || 0) + i.running;
    return row([i.name || i.instance, progress(i.completed, total), i.completed, i.failed, i.queued, i.waiting || 0,
      i.running,
      i.attached ? 'attached' : 'detached']);
  }));
  fill('executors-table', s.executorList.map((e) => row([e.id, e.host, e.impl, e.slots, e.running, e.completed,
    e.failures, e.cachedObjects, e.state])));
  previous = s;
}

function connect() {
  const live = document.getElementById('live');
  const events = new EventSource('/events');
  events.onopen = () => { live.textContent = 'live'; live.className = 'live on'; };
  events.onerror = () => { live.textContent = 'disconnected: retrying'; live.className = 'live off'; };
  events.onmessage = (m) => update(JSON.parse(m.data));
}

window.addEventListener('DOMContentLoaded', () => {
  chart('chart-tasks', ['queued', 'waiting', 'running'], ['#d98b26', '#8e99ab', '#3b7dd8']);
  chart('chart-throughput', ['completed/s'], ['#2f9e55']);
  chart('chart-executors', ['registered', 'busy', 'suspended'], ['#5b6577', '#3b7dd8', '#c0392b']);
  chart('chart-allocations', ['requested', 'active', 'released'], ['#d98b26', '#2f9e55', '#8e99ab']);
  chart('chart-data', ['local hits', 'peer hits', 'store reads'], ['#2f9e55', '#3b7dd8', '#d98b26']);
  connect();
});
