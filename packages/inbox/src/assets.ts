// The inbox's two static files, kept as text here so the app needs no file system and no build step
// on any runtime. The script is the only script the page runs (the CSP allows no inline script): it
// keeps times ticking and swaps in the server-rendered list when the event stream says it changed.

export const SCRIPT = `// toolgate inbox: live list and ticking times; everything shown is rendered (and escaped) by the server.
(function () {
  'use strict';
  var base = document.documentElement.getAttribute('data-base') || '';

  function span(ms) {
    var s = Math.max(0, Math.round(ms / 1000));
    if (s < 60) return s + ' s';
    var m = Math.floor(s / 60);
    if (m < 60) return m + ' min';
    var h = Math.floor(m / 60);
    if (h < 48) return h + ' h ' + (m % 60) + ' min';
    return Math.floor(h / 24) + ' d';
  }

  function tick() {
    var now = Date.now();
    document.querySelectorAll('[data-expires]').forEach(function (el) {
      var left = Date.parse(el.getAttribute('data-expires')) - now;
      el.textContent = left > 0 ? span(left) + ' left' : 'expired';
      var row = el.closest('[data-check-in]');
      if (row && left <= 0) row.classList.add('expired');
    });
    document.querySelectorAll('[data-since]').forEach(function (el) {
      el.textContent = span(now - Date.parse(el.getAttribute('data-since'))) + ' ago';
    });
  }
  tick();
  setInterval(tick, 1000);

  var live = document.getElementById('live');
  if (!live || typeof EventSource === 'undefined') return;
  var refreshing = false;
  function refresh() {
    if (refreshing) return;
    refreshing = true;
    fetch(base + '/fragments/live' + location.search, { credentials: 'same-origin', headers: { accept: 'text/html' } })
      .then(function (res) { return res.ok ? res.text() : null; })
      .then(function (text) {
        if (text === null) return;
        var fresh = new DOMParser().parseFromString(text, 'text/html').getElementById('live');
        var current = document.getElementById('live');
        if (fresh && current) current.replaceWith(document.adoptNode(fresh));
        tick();
      })
      .catch(function () {})
      .then(function () { refreshing = false; });
  }
  var events = new EventSource(base + '/events');
  events.addEventListener('check-ins', refresh);
})();
`;

export const STYLE = `:root { color-scheme: light; --fg: #1d2129; --muted: #5f6673; --line: #dde1e7; --bg: #f6f7f9;
  --accent: #2454d6; --ok: #1d7a46; --bad: #b42318; --warn: #8a5a00; font: 15px/1.45 system-ui, sans-serif; }
* { box-sizing: border-box; }
body { margin: 0; color: var(--fg); background: var(--bg); }
header.top { display: flex; align-items: center; gap: 1rem; padding: .6rem 1.5rem; background: #fff; border-bottom: 1px solid var(--line); }
header.top .brand { font-weight: 700; color: var(--fg); text-decoration: none; }
header.top .who { margin-left: auto; color: var(--muted); }
header.top form { margin: 0; }
main { max-width: 1100px; margin: 1.5rem auto; padding: 0 1.5rem; }
h1 { font-size: 1.45rem; margin: 0 0 1rem; }
h2 { font-size: 1.1rem; margin: 1.6rem 0 .6rem; }
table { width: 100%; border-collapse: collapse; background: #fff; border: 1px solid var(--line); }
th, td { text-align: left; padding: .55rem .75rem; border-bottom: 1px solid var(--line); vertical-align: top; }
thead th { font-size: .8rem; text-transform: uppercase; letter-spacing: .04em; color: var(--muted); }
tr.expired td, tr.expired td * { color: #9aa0aa; }
tr.expired td { background: #f1f2f4; }
a { color: var(--accent); }
.muted { color: var(--muted); }
.badge { display: inline-block; padding: .1rem .55rem; border-radius: 1rem; font-size: .8rem; font-weight: 600; background: #e8ecf5; }
.badge.waiting { background: #fff4d6; color: var(--warn); }
.badge.approved { background: #ddf3e6; color: var(--ok); }
.badge.declined, .badge.expired { background: #fde4e1; color: var(--bad); }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: .35rem 1.2rem; background: #fff; border: 1px solid var(--line); padding: .9rem 1.1rem; margin: 0; }
dl.facts dt { color: var(--muted); }
dl.facts dd { margin: 0; overflow-wrap: anywhere; }
table.args th { width: 14rem; font-family: ui-monospace, monospace; font-weight: 600; overflow-wrap: anywhere; }
pre.value, pre.diff { margin: 0; white-space: pre-wrap; overflow-wrap: anywhere; font: 13px/1.4 ui-monospace, monospace; unicode-bidi: isolate; }
details.fold summary { cursor: pointer; color: var(--muted); }
details.fold summary .preview { font-family: ui-monospace, monospace; color: var(--fg); }
details.fold[open] summary { margin-bottom: .4rem; }
.hidden-char { background: #ffe3a3; color: #6b4500; border-radius: 3px; padding: 0 2px; font-size: .8em; }
.warning { color: var(--warn); }
.notice { padding: .75rem 1rem; border-radius: 6px; background: #e8ecf5; margin-bottom: 1rem; }
.notice.ok { background: #ddf3e6; } .notice.bad { background: #fde4e1; }
section.screen, section.pin-diff, section.actions > form { background: #fff; border: 1px solid var(--line); padding: .9rem 1.1rem; }
pre.diff .added { background: #e6f6ec; display: block; } pre.diff .removed { background: #fdecea; display: block; } pre.diff .same { display: block; }
section.actions { display: grid; grid-template-columns: repeat(auto-fit, minmax(300px, 1fr)); gap: 1rem; }
section.actions h3 { margin: 0 0 .5rem; font-size: 1rem; }
label { display: block; }
textarea, input[type=password], input[type=text] { width: 100%; font: inherit; padding: .45rem .55rem; border: 1px solid var(--line); border-radius: 5px; }
textarea.args { font: 13px/1.4 ui-monospace, monospace; min-height: 9rem; }
button { font: inherit; padding: .45rem 1rem; border-radius: 5px; border: 1px solid transparent; cursor: pointer; margin-top: .5rem; }
button.approve { background: var(--ok); color: #fff; } button.decline { background: var(--bad); color: #fff; }
button.change { background: var(--accent); color: #fff; } button.plain { background: #fff; border-color: var(--line); }
form.sign-in { max-width: 26rem; background: #fff; border: 1px solid var(--line); padding: 1.2rem; }
form.filters { display: flex; gap: .6rem; align-items: end; flex-wrap: wrap; margin-bottom: .8rem; }
form.filters label { display: inline-block; } form.filters input { width: 11rem; font: inherit; padding: .3rem .45rem; }
nav.by-principal, nav.pager { display: flex; gap: .8rem; flex-wrap: wrap; margin: .6rem 0; }
td.args-summary { font: 13px/1.4 ui-monospace, monospace; max-width: 28rem; overflow-wrap: anywhere; }
`;
