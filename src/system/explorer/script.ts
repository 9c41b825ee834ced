/**
 * Script of the API explorer (served at /api/v2/docs/explorer.js): plain browser JavaScript, no library,
 * kept in a string so the worker serves it itself. Rules for editing: no template literals inside (the
 * file is one String.raw template), DOM built with createElement/textContent only.
 *
 * Signing in the browser (same chain as src/auth/signature.ts, reasoning kept here):
 *   d1 = HMAC-SHA256(key = UTF-8 of the token key, METHOD + path?query exactly as sent)
 *   d2 = HMAC-SHA256(key = d1, first 13 characters of RequestDate)
 *   d3 = HMAC-SHA256(key = d2, the exact body bytes sent; empty for GET)
 * The target string is built once from encodeURIComponent'd parts, signed, and passed to fetch unchanged;
 * bodies are serialised to bytes first (a multipart form through `new Response(form)`) so the signed bytes
 * are the bytes sent. Credentials live only in this page's memory: nothing is written to storage.
 */
export const EXPLORER_JS = String.raw`
(function () {
  'use strict';
  var SPEC_URL = '/api/v2/spec';
  var auth = { mode: 'none', jwt: '', tokenId: '', tokenKey: '' };
  var spec = null;
  var enc = new TextEncoder();

  // ---------- DOM helpers ----------
  function el(tag, props, children) {
    var n = document.createElement(tag);
    if (props) {
      for (var k in props) {
        if (!Object.prototype.hasOwnProperty.call(props, k) || props[k] === undefined || props[k] === null) continue;
        if (k === 'text') n.textContent = props[k];
        else if (k === 'class') n.className = props[k];
        else if (k === 'on') { for (var ev in props.on) n.addEventListener(ev, props.on[ev]); }
        else if (k in n && typeof props[k] !== 'string') n[k] = props[k];
        else n.setAttribute(k, props[k]);
      }
    }
    (children || []).forEach(function (c) {
      if (c === null || c === undefined || c === false) return;
      n.appendChild(typeof c === 'string' ? document.createTextNode(c) : c);
    });
    return n;
  }
  function $(id) { return document.getElementById(id); }

  // ---------- signing ----------
  function hmac(keyBytes, msgBytes) {
    return crypto.subtle.importKey('raw', keyBytes, { name: 'HMAC', hash: 'SHA-256' }, false, ['sign'])
      .then(function (k) { return crypto.subtle.sign('HMAC', k, msgBytes); })
      .then(function (b) { return new Uint8Array(b); });
  }
  function base64(bytes) {
    var s = '';
    for (var i = 0; i < bytes.length; i += 0x8000) s += String.fromCharCode.apply(null, bytes.subarray(i, i + 0x8000));
    return btoa(s);
  }
  async function signature(key, method, target, date, body) {
    var d1 = await hmac(enc.encode(key), enc.encode(method + target));
    var d2 = await hmac(d1, enc.encode(date.slice(0, 13)));
    return base64(await hmac(d2, body || new Uint8Array(0)));
  }
  async function authHeaders(method, target, body) {
    var h = {};
    if (auth.mode === 'bearer' && auth.jwt) h['Authorization'] = 'Bearer ' + auth.jwt.trim();
    if (auth.mode === 'token' && auth.tokenId && auth.tokenKey) {
      if (!window.crypto || !crypto.subtle) throw new Error('signing needs a secure context (HTTPS or localhost): SubtleCrypto is unavailable here');
      var date = new Date().toISOString();
      h['Authorization'] = 'svcsignature ' + auth.tokenId.trim();
      h['RequestDate'] = date;
      h['Signature'] = await signature(auth.tokenKey.trim(), method, target, date, body);
    }
    return h;
  }

  // ---------- OpenAPI helpers ----------
  function deref(o) {
    var guard = 0;
    while (o && typeof o.$ref === 'string' && o.$ref.indexOf('#/') === 0 && guard++ < 10) {
      var cur = spec;
      o.$ref.slice(2).split('/').forEach(function (p) { cur = cur ? cur[p.replace(/~1/g, '/').replace(/~0/g, '~')] : undefined; });
      o = cur;
    }
    return o;
  }
  function schemaType(s) {
    s = deref(s) || {};
    if (s.enum) return 'enum';
    var t = s.type;
    if (Array.isArray(t)) t = t.filter(function (x) { return x !== 'null'; })[0];
    if (!t && (s.anyOf || s.oneOf)) return schemaType((s.anyOf || s.oneOf)[0]);
    return t || 'any';
  }
  function sample(s, depth) {
    s = deref(s) || {};
    if (depth > 5) return null;
    if (s.examples && s.examples.length) return s.examples[0];
    if (s.example !== undefined) return s.example;
    if (s.default !== undefined) return s.default;
    if (s.const !== undefined) return s.const;
    if (s.enum) return s.enum[0];
    if (s.anyOf || s.oneOf) return sample((s.anyOf || s.oneOf)[0], depth + 1);
    if (s.allOf) return sample(s.allOf[0], depth + 1);
    switch (schemaType(s)) {
      case 'object':
        var out = {};
        var props = s.properties || {};
        var req = s.required || [];
        var keys = Object.keys(props);
        var pick = req.length ? keys.filter(function (k) { return req.indexOf(k) >= 0; }) : keys;
        pick.forEach(function (k) { out[k] = sample(props[k], depth + 1); });
        return out;
      case 'array': return s.items ? [sample(s.items, depth + 1)] : [];
      case 'integer': case 'number': return s.minimum !== undefined ? s.minimum : 0;
      case 'boolean': return false;
      case 'string': return s.format === 'date-time' ? new Date().toISOString() : '';
      default: return null;
    }
  }
  function operations() {
    var ops = [];
    Object.keys(spec.paths || {}).forEach(function (path) {
      var item = spec.paths[path];
      ['get', 'put', 'post', 'patch', 'delete', 'head', 'options'].forEach(function (m) {
        if (item[m]) ops.push({ method: m, path: path, op: item[m], shared: item.parameters || [] });
      });
    });
    return ops;
  }

  // ---------- credentials panel ----------
  function renderAuth() {
    var box = $('auth');
    box.textContent = '';
    var mode = el('select', { id: 'auth-mode', on: { change: function () { auth.mode = mode.value; renderAuth(); } } }, [
      el('option', { value: 'none', text: 'No credentials' }),
      el('option', { value: 'bearer', text: 'Session (Bearer JWT)' }),
      el('option', { value: 'token', text: 'API token (signed request)' })
    ]);
    mode.value = auth.mode;
    box.appendChild(el('div', { class: 'row' }, [el('label', { for: 'auth-mode', text: 'Credentials' }), mode,
      el('span', { class: 'muted', text: 'kept in this page only, never stored' })]));
    if (auth.mode === 'bearer') {
      var jwt = el('input', { id: 'auth-jwt', type: 'password', placeholder: 'session token (JWT)', value: auth.jwt,
        on: { input: function () { auth.jwt = jwt.value; } } });
      box.appendChild(el('div', { class: 'row' }, [el('label', { for: 'auth-jwt', text: 'Bearer' }), jwt]));
      var user = el('input', { id: 'login-user', type: 'text', placeholder: 'user name', autocomplete: 'username' });
      var pass = el('input', { id: 'login-password', type: 'password', placeholder: 'password', autocomplete: 'current-password' });
      var msg = el('span', { id: 'login-message', class: 'muted' });
      var btn = el('button', { id: 'login-button', type: 'button', class: 'secondary', text: 'Log in', on: { click: async function () {
        btn.disabled = true; msg.textContent = 'logging in…';
        try {
          var res = await fetch('/api/v2/login', { method: 'POST', headers: { 'Content-Type': 'application/json' },
            body: JSON.stringify({ login_method: 'secret', username: user.value, secret: pass.value }), credentials: 'omit' });
          var j = await res.json();
          if (!res.ok) throw new Error(envelopeMessage(j) || ('HTTP ' + res.status));
          auth.jwt = j.data.session_token; jwt.value = auth.jwt; pass.value = '';
          msg.textContent = 'logged in; the session token is filled in above';
        } catch (e) { msg.textContent = 'login failed: ' + e.message; }
        btn.disabled = false;
      } } });
      box.appendChild(el('div', { class: 'row' }, [el('label', { for: 'login-user', text: 'or log in' }), user, pass, btn, msg]));
    } else if (auth.mode === 'token') {
      var id = el('input', { id: 'auth-token-id', type: 'text', placeholder: 'token id (UUID)', value: auth.tokenId,
        on: { input: function () { auth.tokenId = id.value; } } });
      var key = el('input', { id: 'auth-token-key', type: 'password', placeholder: 'token key', value: auth.tokenKey,
        on: { input: function () { auth.tokenKey = key.value; } } });
      box.appendChild(el('div', { class: 'row' }, [el('label', { for: 'auth-token-id', text: 'Token id' }), id,
        el('label', { for: 'auth-token-key', text: 'key' }), key]));
      if (!window.crypto || !crypto.subtle)
        box.appendChild(el('p', { class: 'notice err', text: 'This page is not a secure context (HTTPS or localhost), so the browser cannot sign requests.' }));
    }
  }
  function envelopeMessage(j) {
    if (j && Array.isArray(j.errors)) return j.errors.map(function (e) { return e.message + (e.context ? ' [' + e.context + ']' : ''); }).join('; ');
    return '';
  }

  // ---------- operation panels ----------
  function paramRows(entry) {
    var list = [];
    entry.shared.concat(entry.op.parameters || []).forEach(function (p) {
      p = deref(p);
      if (!p || p.in === 'header') return; // Authorization, RequestDate, Signature come from the credentials panel
      list.push(p);
    });
    return list;
  }
  function inputFor(p, idBase) {
    var s = deref(p.schema) || {};
    if (s.enum) {
      var sel = el('select', { id: idBase }, [el('option', { value: '', text: '' })].concat(s.enum.map(function (v) { return el('option', { value: String(v), text: String(v) }); })));
      return sel;
    }
    if (schemaType(s) === 'boolean') {
      return el('select', { id: idBase }, [el('option', { value: '', text: '' }), el('option', { value: 'true', text: 'true' }), el('option', { value: 'false', text: 'false' })]);
    }
    return el('input', { id: idBase, type: 'text', placeholder: s.default !== undefined ? String(s.default) : (s.format || schemaType(s)) });
  }

  function renderBody(entry, container, idBase) {
    var rb = deref(entry.op.requestBody);
    if (!rb || !rb.content) return null;
    var types = Object.keys(rb.content);
    var picker = el('select', { id: idBase + '-ctype' }, types.map(function (t) { return el('option', { value: t, text: t }); }));
    var area = el('div');
    container.appendChild(el('h3', { text: 'Request body' + (rb.required ? ' (required)' : '') }));
    if (rb.description) container.appendChild(el('p', { class: 'muted', text: rb.description }));
    container.appendChild(el('div', { class: 'row' }, [el('label', { for: idBase + '-ctype', text: 'Content-Type ' }), picker]));
    container.appendChild(area);
    var current = { read: function () { return Promise.resolve({ bytes: null, type: null }); } };
    function draw() {
      area.textContent = '';
      var t = picker.value;
      var schema = deref((rb.content[t] || {}).schema) || {};
      if (t === 'application/json' || /\+json$/.test(t)) {
        var ta = el('textarea', { id: idBase + '-body', spellcheck: false });
        ta.value = JSON.stringify(sample(schema, 0), null, 2);
        area.appendChild(ta);
        current.read = function () { return Promise.resolve({ bytes: enc.encode(ta.value), type: t }); };
      } else if (t === 'multipart/form-data') {
        var fields = [];
        var props = schema.properties || {};
        var table = el('table', { class: 'params' });
        Object.keys(props).forEach(function (name) {
          var ps = deref(props[name]) || {};
          var isFile = ps.format === 'binary' || ps.contentMediaType || ps.contentEncoding || schemaType(ps) === 'any';
          var input = isFile ? el('input', { type: 'file', id: idBase + '-f-' + name }) : el('input', { type: 'text', id: idBase + '-f-' + name });
          fields.push({ name: name, input: input, file: isFile });
          table.appendChild(el('tr', null, [el('td', null, [el('code', { text: name })]), el('td', null, [input])]));
        });
        area.appendChild(table);
        current.read = async function () {
          var form = new FormData();
          fields.forEach(function (f) {
            if (f.file) { if (f.input.files[0]) form.append(f.name, f.input.files[0], f.input.files[0].name); }
            else if (f.input.value !== '') form.append(f.name, f.input.value);
          });
          var r = new Response(form);
          return { bytes: new Uint8Array(await r.arrayBuffer()), type: r.headers.get('content-type') };
        };
      } else {
        var file = el('input', { type: 'file', id: idBase + '-file' });
        area.appendChild(el('div', { class: 'row' }, [el('label', { for: idBase + '-file', text: 'File ' }), file]));
        current.read = async function () {
          if (!file.files[0]) return { bytes: null, type: null };
          return { bytes: new Uint8Array(await file.files[0].arrayBuffer()), type: t };
        };
      }
    }
    picker.addEventListener('change', draw);
    draw();
    return function () { return current.read(); };
  }

  function renderResult(box, res, text, ms) {
    box.textContent = '';
    var ok = res.status >= 200 && res.status < 300;
    box.appendChild(el('p', null, [el('span', { class: 'status ' + (ok ? 'ok' : 'err'), text: 'HTTP ' + res.status + ' ' + (res.statusText || '') }),
      el('span', { class: 'muted', text: '  ' + ms + ' ms' })]));
    var ctype = res.headers.get('content-type') || '';
    var body = text;
    var parsed = null;
    if (/json/.test(ctype) && text) { try { parsed = JSON.parse(text); body = JSON.stringify(parsed, null, 2); } catch (e) { /* keep text */ } }
    if (!ok && parsed) {
      var m = envelopeMessage(parsed);
      if (m) box.appendChild(el('p', { class: 'error-messages', text: m }));
    }
    var shown = ['requestid', 'content-type', 'ratelimit', 'ratelimit-policy', 'retry-after', 'deprecation', 'location', 'www-authenticate', 'allow'];
    var lines = [];
    res.headers.forEach(function (v, k) { if (shown.indexOf(k.toLowerCase()) >= 0) lines.push(k + ': ' + v); });
    if (lines.length) box.appendChild(el('pre', { class: 'headers', text: lines.join('\n') }));
    if (body.length > 200000) body = body.slice(0, 200000) + '\n… (truncated)';
    box.appendChild(el('pre', { class: 'body', text: body || '(empty body)' }));
  }

  function renderOpBody(entry, details) {
    var op = entry.op;
    var idBase = 'op-' + (op.operationId || (entry.method + entry.path).replace(/[^A-Za-z0-9]+/g, '-'));
    var body = el('div', { class: 'op-body' });
    if (op.description) body.appendChild(el('p', { text: op.description }));
    var perm = op['x-permission'];
    body.appendChild(el('p', { class: 'muted', text: (op.security && op.security.length === 0) ? 'No authentication needed.' :
      ('Needs a signed request or a session' + (perm ? '; permission ' + perm : '') + '.') }));
    var params = paramRows(entry);
    var inputs = [];
    if (params.length) {
      body.appendChild(el('h3', { text: 'Parameters' }));
      var table = el('table', { class: 'params' }, [el('tr', null, [el('th', { text: 'Name' }), el('th', { text: 'In' }), el('th', { text: 'Value' }), el('th', { text: 'Description' })])]);
      params.forEach(function (p) {
        var input = inputFor(p, idBase + '-' + p.in + '-' + p.name);
        inputs.push({ p: p, input: input });
        table.appendChild(el('tr', null, [
          el('td', null, [el('code', { text: p.name }), p.required ? el('span', { class: 'required', text: ' *' }) : null]),
          el('td', { text: p.in }), el('td', null, [input]), el('td', { class: 'muted', text: p.description || '' })]));
      });
      body.appendChild(table);
    }
    var readBody = renderBody(entry, body, idBase);
    var result = el('div', { class: 'result', 'aria-live': 'polite' });
    var send = el('button', { type: 'button', class: 'send', text: 'Send request' });
    send.addEventListener('click', async function () {
      send.disabled = true;
      result.textContent = '';
      try {
        var target = entry.path;
        var query = [];
        for (var i = 0; i < inputs.length; i++) {
          var p = inputs[i].p, v = inputs[i].input.value;
          if (p.in === 'path') {
            if (v === '') throw new Error('path parameter ' + p.name + ' is required');
            target = target.replace('{' + p.name + '}', encodeURIComponent(v));
          } else if (p.in === 'query' && v !== '') query.push(encodeURIComponent(p.name) + '=' + encodeURIComponent(v));
        }
        if (query.length) target += '?' + query.join('&');
        var method = entry.method.toUpperCase();
        var b = readBody ? await readBody() : { bytes: null, type: null };
        var headers = await authHeaders(method, target, b.bytes);
        if (b.type && b.bytes) headers['Content-Type'] = b.type;
        var t0 = performance.now();
        var res = await fetch(target, { method: method, headers: headers, body: b.bytes, credentials: 'omit', cache: 'no-store' });
        var text = method === 'HEAD' ? '' : await res.text();
        renderResult(result, res, text, Math.round(performance.now() - t0));
      } catch (e) {
        result.appendChild(el('p', { class: 'notice err', text: 'Request not sent: ' + e.message }));
      }
      send.disabled = false;
    });
    body.appendChild(el('div', { class: 'actions' }, [send, el('span', { class: 'muted', text: entry.method.toUpperCase() + ' ' + entry.path })]));
    body.appendChild(result);
    var codes = Object.keys(op.responses || {});
    if (codes.length) {
      body.appendChild(el('h3', { text: 'Responses' }));
      body.appendChild(el('ul', { class: 'responses' }, codes.map(function (code) {
        var r = deref(op.responses[code]) || {};
        return el('li', null, [el('code', { text: code }), ' ' + (r.description || '')]);
      })));
    }
    details.appendChild(body);
  }

  function renderOperations() {
    var main = $('operations');
    main.textContent = '';
    var ops = operations();
    var groups = {};
    var order = [];
    ops.forEach(function (e) {
      var tag = (e.op.tags && e.op.tags[0]) || 'Other';
      if (!groups[tag]) { groups[tag] = []; order.push(tag); }
      groups[tag].push(e);
    });
    order.forEach(function (tag) {
      var section = el('section', { class: 'tag-group', 'data-tag': tag }, [el('h2', null, [tag, el('span', { class: 'muted', text: groups[tag].length + ' operation(s)' })])]);
      groups[tag].forEach(function (e) {
        var op = e.op;
        var secured = !(op.security && op.security.length === 0);
        var summary = el('summary', null, [
          el('span', { class: 'method m-' + e.method, text: e.method.toUpperCase() }),
          el('code', { class: 'path', text: e.path }),
          el('span', { class: 'summary', text: op.summary || '' }),
          secured ? el('span', { class: 'badge lock', text: op['x-permission'] || 'authenticated', title: 'needs credentials' }) : el('span', { class: 'badge', text: 'public' }),
          op.deprecated ? el('span', { class: 'badge', text: 'deprecated' }) : null
        ]);
        var details = el('details', { class: 'op' + (op.deprecated ? ' deprecated' : ''), id: 'op-' + (op.operationId || ''),
          'data-method': e.method, 'data-path': e.path,
          'data-search': [e.method, e.path, op.summary, op.operationId, (op.tags || []).join(' '), op['x-permission']].join(' ').toLowerCase() }, [summary]);
        var built = false;
        details.addEventListener('toggle', function () { if (details.open && !built) { built = true; renderOpBody(e, details); } });
        section.appendChild(details);
      });
      main.appendChild(section);
    });
    main.setAttribute('aria-busy', 'false');
    applyFilter();
    if (location.hash) {
      var target = document.getElementById(decodeURIComponent(location.hash.slice(1)));
      if (target && target.tagName === 'DETAILS') { target.open = true; target.scrollIntoView(); }
    }
  }

  function applyFilter() {
    var q = $('filter').value.trim().toLowerCase();
    var all = document.querySelectorAll('details.op');
    var shown = 0;
    all.forEach(function (d) {
      var hit = !q || q.split(/\s+/).every(function (w) { return d.getAttribute('data-search').indexOf(w) >= 0; });
      d.classList.toggle('hidden', !hit);
      if (hit) shown++;
    });
    document.querySelectorAll('section.tag-group').forEach(function (s) {
      s.classList.toggle('hidden', !s.querySelector('details.op:not(.hidden)'));
    });
    $('op-count').textContent = q ? (shown + ' of ' + all.length + ' operations') : (all.length + ' operations');
  }

  async function start() {
    renderAuth();
    $('filter').addEventListener('input', applyFilter);
    try {
      var res = await fetch(SPEC_URL, { credentials: 'omit' });
      if (!res.ok) throw new Error('HTTP ' + res.status);
      spec = await res.json();
      $('api-version').textContent = (spec.info && spec.info.title ? spec.info.title + ' ' : '') + (spec.info && spec.info.version ? spec.info.version : '') + ' · OpenAPI ' + spec.openapi;
      renderOperations();
    } catch (e) {
      var main = $('operations');
      main.textContent = '';
      main.appendChild(el('p', { class: 'notice err', text: 'Could not load the API description from ' + SPEC_URL + ': ' + e.message }));
      main.setAttribute('aria-busy', 'false');
    }
  }
  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', start); else start();
})();
`
