/**
 * The viewer's one script (served as /app.js). Session text is hostile: the DOM is built with
 * createElement and textContent only — never innerHTML, never a URL or an attribute from a
 * record (class names from records are cut to [A-Za-z0-9-]). Every request carries the token
 * of the page's own URL. Written without backticks or `${`: it is a template literal here.
 */
export const APP_JS = String.raw`(function () {
  'use strict';
  var token = new URLSearchParams(location.search).get('token') || '';
  var $ = function (id) { return document.getElementById(id); };
  var list = $('sessions'), search = $('search'), header = $('header'), transcript = $('transcript'), live = $('live');
  var source = null, current = null, lastSeq = 0, timer = null;

  function api(path) { return path + (path.indexOf('?') < 0 ? '?' : '&') + 'token=' + encodeURIComponent(token); }
  function cls(s) { return String(s).replace(/[^A-Za-z0-9-]/g, ''); }
  function el(tag, className, text) {
    var e = document.createElement(tag);
    if (className) e.className = className;
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }
  /** Text into an element, each redaction marker shown as a marked span. */
  function rich(parent, text) {
    var re = /<redacted(?::[^<>]{0,80})?>/g, at = 0, m;
    while ((m = re.exec(text)) !== null) {
      if (m.index > at) parent.appendChild(document.createTextNode(text.slice(at, m.index)));
      parent.appendChild(el('span', 'redacted', m[0]));
      at = m.index + m[0].length;
    }
    if (at < text.length) parent.appendChild(document.createTextNode(text.slice(at)));
    return parent;
  }
  function getJson(path) {
    return fetch(api(path)).then(function (r) {
      return r.json().then(function (body) { if (!r.ok) throw new Error(body && body.error ? body.error : 'HTTP ' + r.status); return body; });
    });
  }

  function loadList() {
    var q = search.value;
    getJson('/api/sessions?q=' + encodeURIComponent(q)).then(function (rows) {
      if (search.value !== q) return;
      list.replaceChildren();
      rows.forEach(function (row) {
        var li = el('li', row.sessionId === current ? 'session current' : 'session');
        li.dataset.id = row.sessionId;
        li.appendChild(el('span', 'title', row.title || row.firstMessage || '(untitled)'));
        li.appendChild(el('span', 'meta', row.sessionId + ' · ' + row.lastSeq + ' records · ' + row.updatedAt));
        if (row.snippet) li.appendChild(rich(el('span', 'snippet'), row.snippet));
        li.addEventListener('click', function () { openSession(row.sessionId); });
        list.appendChild(li);
      });
      if (rows.length === 0) list.appendChild(el('li', 'empty', q ? 'no session matches' : 'no sessions'));
    }, function (e) { list.replaceChildren(el('li', 'empty', String(e.message || e))); });
  }

  function entry(e) {
    var folded = e.collapsed === true;
    var d = el(folded ? 'details' : 'div', 'entry kind-' + cls(e.kind) + (e.result ? ' is-result' : '') + (e.compaction ? ' compaction' : ''));
    d.dataset.seq = String(e.seq);
    var head = el(folded ? 'summary' : 'div', 'head');
    head.appendChild(el('span', 'seq', '#' + e.seq));
    head.appendChild(el('span', 'ts', e.ts.replace('T', ' ').replace(/\.\d+Z$/, '')));
    var who = e.who;
    if (e.result) who += ' ← ' + (e.result.name || 'result') + (e.result.id ? ' [' + e.result.id + ']' : '');
    head.appendChild(el('span', 'who role-' + cls(e.who), who));
    d.appendChild(head);
    if (e.text) d.appendChild(rich(el('pre', 'body'), e.text));
    (e.toolCalls || []).forEach(function (c) {
      var t = el('div', 'toolcall');
      t.appendChild(el('span', 'arrow', '→ '));
      t.appendChild(el('span', 'name', c.name));
      t.appendChild(rich(el('span', 'args'), '(' + c.args + ')'));
      if (c.id) t.appendChild(el('span', 'id', ' [' + c.id + ']'));
      d.appendChild(t);
    });
    return d;
  }

  function showHeader(v) {
    var h = v.header, facts = ['created ' + h.createdAt, h.lastSeq + ' records'];
    if (h.cwd) facts.push('cwd ' + h.cwd);
    if (h.model) facts.push('model ' + h.model);
    if (h.parent) facts.push(h.parent);
    if (v.turn) facts.push('turn ' + v.turn.status + (v.turn.status === 'active' && v.turn.phase ? ' (' + v.turn.phase + ')' : ''));
    if (h.tags.length) facts.push('tags ' + h.tags.join(', '));
    if (v.generations.length) facts.push('compacted ' + v.generations.length + ' time' + (v.generations.length === 1 ? '' : 's') + ' (archived records shown)');
    header.replaceChildren(el('h1', 'title', h.title || '(untitled)'), el('p', 'facts', h.sessionId), el('p', 'facts', facts.join(' · ')));
    if (v.usage.line) header.appendChild(el('p', 'facts usage', v.usage.line));
    if (h.systemPrompt) header.appendChild(rich(el('div', 'system'), h.systemPrompt));
  }

  function openSession(id) {
    if (source) source.close(), source = null;
    current = id;
    Array.prototype.forEach.call(list.children, function (li) { li.classList.toggle('current', li.dataset.id === id); });
    getJson('/api/session/' + encodeURIComponent(id)).then(function (v) {
      if (current !== id) return;
      showHeader(v);
      transcript.replaceChildren.apply(transcript, v.records.map(entry));
      lastSeq = v.records.length ? Math.max(v.header.lastSeq, v.records[v.records.length - 1].seq) : v.header.lastSeq;
      follow(id);
    }, function (e) { header.replaceChildren(el('p', 'facts', String(e.message || e))); transcript.replaceChildren(); });
  }

  /** New records as they are committed (server-sent events); a seq already shown is skipped. */
  function follow(id) {
    source = new EventSource(api('/api/session/' + encodeURIComponent(id) + '/events?after=' + lastSeq));
    live.textContent = 'following new records…';
    source.addEventListener('record', function (ev) {
      var e = JSON.parse(ev.data);
      if (current !== id || e.seq <= lastSeq) return;
      lastSeq = e.seq;
      var d = entry(e);
      d.classList.add('new');
      transcript.appendChild(d);
      live.textContent = 'following new records… last #' + e.seq;
    });
    source.addEventListener('end', function (ev) {
      live.textContent = JSON.parse(ev.data).reason;
      source.close();
    });
  }

  search.addEventListener('input', function () { clearTimeout(timer); timer = setTimeout(loadList, 200); });
  loadList();
})();
`;
