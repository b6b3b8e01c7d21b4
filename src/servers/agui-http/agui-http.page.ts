import { createHash } from 'node:crypto';

/**
 * The built-in chat page served at `GET /`: one self-contained HTML document (no CDN, no build
 * step). Its inline script POSTs an AG-UI `RunAgentInput` to `agent` (relative to the page, so it
 * works under a mount prefix), reads the SSE response with a small reader (frames split on a
 * blank line, `data:` lines joined) and renders the events: streamed assistant text, one card
 * per tool call (name, arguments, result), errors. A Stop button aborts the request (the server
 * then cancels the run); after a 401 it asks for the bearer token and keeps it in
 * `sessionStorage`. It declares one frontend tool, `ask_user` (a yes/no question answered with
 * buttons in the tool's card, sent back as the `tool` message of the next run), and answers an
 * interrupt outcome (a tool confirmation) with Allow / Deny buttons (`resume` of the next run).
 * All text is inserted with `textContent`, never as HTML.
 */

const STYLE = `
*{box-sizing:border-box}
body{margin:0;font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;background:#f4f5f7;color:#1d2330;display:flex;flex-direction:column;height:100vh}
header{background:#1d2330;color:#fff;padding:10px 20px;display:flex;align-items:center;gap:12px}
header h1{font-size:17px;margin:0;font-weight:600}
header .sub{opacity:.7;font-size:13px}
header button{margin-left:auto;background:transparent;color:#fff;border:1px solid #ffffff55;border-radius:6px;padding:4px 10px;cursor:pointer}
#log{flex:1;overflow-y:auto;padding:18px 20px;display:flex;flex-direction:column;gap:10px}
.msg{max-width:78%;padding:9px 13px;border-radius:12px;white-space:pre-wrap;word-wrap:break-word}
.user{align-self:flex-end;background:#2f6fed;color:#fff;border-bottom-right-radius:4px}
.assistant{align-self:flex-start;background:#fff;border:1px solid #dde1e8;border-bottom-left-radius:4px}
.assistant.streaming::after{content:"\\258D";color:#2f6fed;margin-left:1px}
.tool{align-self:flex-start;max-width:78%;background:#fffbea;border:1px solid #ecd98b;border-radius:10px;padding:8px 12px;font-size:13.5px}
.tool .head{font-weight:600;display:flex;gap:8px;align-items:center}
.tool .state{font-weight:400;color:#8a6d00}
.tool.done .state{color:#1c7c3c}
.tool.failed{background:#fdecec;border-color:#f3b4b4}
.tool.failed .state{color:#9b1c1c}
.tool .label{color:#6b7280;font-size:12px;margin-top:4px}
.ask{display:flex;gap:8px;align-items:center;margin-top:6px;flex-wrap:wrap}
.ask button{font:inherit;font-size:13px;padding:4px 12px;border-radius:6px;border:1px solid #2f6fed;background:#fff;color:#2f6fed;cursor:pointer}
.ask button.yes{background:#2f6fed;color:#fff}
.confirm{align-self:flex-start;max-width:78%;background:#eef3fe;border:1px solid #b9cdf7;border-radius:10px;padding:8px 12px;font-size:13.5px}
.tool pre{margin:2px 0 0;padding:5px 8px;background:#fff;border:1px solid #eee3b5;border-radius:6px;white-space:pre-wrap;word-break:break-word;font:12.5px/1.4 ui-monospace,SFMono-Regular,Menlo,monospace}
.error{align-self:stretch;background:#fdecec;border:1px solid #f3b4b4;color:#9b1c1c;border-radius:8px;padding:8px 12px}
.hint{color:#6b7280;text-align:center;margin-top:18vh}
form{display:flex;gap:8px;padding:12px 20px;background:#fff;border-top:1px solid #dde1e8}
form input{flex:1;font:inherit;padding:9px 12px;border:1px solid #c8ced8;border-radius:8px}
form input#token{flex:0 0 220px}
form button{font:inherit;padding:9px 16px;border-radius:8px;border:0;background:#2f6fed;color:#fff;cursor:pointer}
form button#stop{background:#6b7280}
form button:disabled{opacity:.45;cursor:default}
#status{font-size:12px;color:#6b7280;padding:0 20px 8px;background:#fff}
[hidden]{display:none!important}
`;

const SCRIPT = `
(() => {
  'use strict';
  const $ = (id) => document.getElementById(id);
  const log = $('log'), form = $('form'), input = $('prompt'), send = $('send'), stop = $('stop'), status = $('status'), tokenBox = $('token');
  const newId = (p) => p + '-' + (crypto.randomUUID ? crypto.randomUUID() : Date.now().toString(36) + Math.random().toString(36).slice(2));
  const endpoint = new URL('agent', location.href.endsWith('/') ? location.href : location.href + '/').href;
  let threadId = newId('thread');
  let history = [];
  let controller;
  /** Tool cards by call id, for the whole thread: a run that continues a waiting one gets its results. */
  let tools = new Map();
  /** The page's frontend tool: the model asks the user a yes/no question. */
  const ASK_USER = { name: 'ask_user', description: 'Ask the user a yes/no question in the page; the result is their answer (yes or no).', parameters: { type: 'object', properties: { question: { type: 'string', description: 'The question to ask' } }, required: ['question'] } };
  tokenBox.value = sessionStorage.getItem('agentrx-token') || '';
  if (tokenBox.value) tokenBox.hidden = false;

  const el = (tag, cls, text) => { const e = document.createElement(tag); if (cls) e.className = cls; if (text !== undefined) e.textContent = text; return e; };
  const add = (node) => { $('hint')?.remove(); log.appendChild(node); log.scrollTop = log.scrollHeight; return node; };
  const pretty = (s) => { try { return JSON.stringify(JSON.parse(s), null, 1).replace(/\\n\\s*/g, ' '); } catch { return s; } };
  const setBusy = (busy, text) => { send.disabled = busy; stop.disabled = !busy; input.disabled = busy; status.textContent = text; if (!busy) input.focus(); };

  $('new').addEventListener('click', () => { controller?.abort(); threadId = newId('thread'); history = []; tools = new Map(); log.replaceChildren(); setBusy(false, 'new conversation'); });
  stop.addEventListener('click', () => controller?.abort());
  form.addEventListener('submit', (e) => { e.preventDefault(); const text = input.value.trim(); if (text) { input.value = ''; void run(text); } });

  /** Asks the user the ask_user question in the tool's card; resolves with 'yes' or 'no'. */
  const askInCard = (t) => new Promise((resolve) => {
    let question = 'Go ahead?';
    try { question = JSON.parse(t.raw || '{}').question || question; } catch {}
    t.state.textContent = 'waiting for you';
    const box = t.card.appendChild(el('div', 'ask'));
    box.appendChild(el('span', 'question', question));
    for (const answer of ['yes', 'no']) {
      const b = box.appendChild(el('button', answer === 'yes' ? 'yes' : 'no', answer === 'yes' ? 'Yes' : 'No'));
      b.type = 'button';
      b.addEventListener('click', () => {
        box.remove();
        t.card.appendChild(el('div', 'label', 'your answer'));
        t.card.appendChild(el('pre', 'result', answer));
        t.card.classList.add('done'); t.state.textContent = '\u2713 answered';
        resolve(answer);
      });
    }
  });

  /** Asks the user to allow or deny each interrupt (a tool confirmation); resolves with the resume entries. */
  const confirmAll = (interrupts) => Promise.all(interrupts.map((it) => new Promise((resolve) => {
    const box = add(el('div', 'confirm'));
    box.appendChild(el('div', 'question', it.message || ('The agent waits for your answer (' + it.reason + ').')));
    const row = box.appendChild(el('div', 'ask'));
    for (const allow of [true, false]) {
      const b = row.appendChild(el('button', allow ? 'yes' : 'no', allow ? 'Allow' : 'Deny'));
      b.type = 'button';
      b.addEventListener('click', () => { row.remove(); box.appendChild(el('div', 'label', allow ? 'allowed' : 'denied')); resolve({ interruptId: it.id, status: 'resolved', payload: { allow } }); });
    }
  })));

  /**
   * One run: \`text\` is the user's new message (absent when the run answers what the last one left
   * waiting: the \`tool\` messages already in history, or \`resume\`).
   */
  async function run(text, resume) {
    const before = history.length;
    let bubble;
    if (text !== undefined) {
      history.push({ id: newId('user'), role: 'user', content: text });
      bubble = add(el('div', 'msg user', text));
    }
    const runId = newId('run');
    const texts = new Map();
    let terminal = false, pending = [], interrupts = [];
    controller = new AbortController();
    setBusy(true, 'running…');
    const headers = { 'content-type': 'application/json', accept: 'text/event-stream' };
    if (tokenBox.value) headers.authorization = 'Bearer ' + tokenBox.value;
    const onEvent = (ev) => {
      switch (ev.type) {
        case 'RUN_STARTED': status.textContent = 'run ' + ev.runId + ' started'; break;
        case 'TEXT_MESSAGE_START': texts.set(ev.messageId, add(el('div', 'msg assistant streaming', ''))); break;
        case 'TEXT_MESSAGE_CONTENT': { const n = texts.get(ev.messageId) || texts.set(ev.messageId, add(el('div', 'msg assistant streaming', ''))).get(ev.messageId); n.textContent += ev.delta; log.scrollTop = log.scrollHeight; break; }
        case 'TEXT_MESSAGE_END': { const n = texts.get(ev.messageId); if (n) { n.classList.remove('streaming'); history.push({ id: ev.messageId, role: 'assistant', content: n.textContent }); } break; }
        case 'TOOL_CALL_START': {
          const card = add(el('div', 'tool'));
          const head = card.appendChild(el('div', 'head'));
          head.appendChild(el('span', 'icon', '\\u2699'));
          head.appendChild(el('span', 'name', ev.toolCallName));
          const state = head.appendChild(el('span', 'state', 'running…'));
          card.appendChild(el('div', 'label', 'arguments'));
          const args = card.appendChild(el('pre', 'args', ''));
          tools.set(ev.toolCallId, { card, state, args, raw: '', name: ev.toolCallName });
          break;
        }
        case 'TOOL_CALL_ARGS': { const t = tools.get(ev.toolCallId); if (t) { t.raw += ev.delta; t.args.textContent = pretty(t.raw); } break; }
        case 'TOOL_CALL_END': { const t = tools.get(ev.toolCallId); if (t) history.push({ id: newId('call'), role: 'assistant', content: '', toolCalls: [{ id: ev.toolCallId, type: 'function', function: { name: t.name, arguments: t.raw || '{}' } }] }); break; }
        case 'TOOL_CALL_RESULT': {
          const t = tools.get(ev.toolCallId); if (!t) break;
          const content = typeof ev.content === 'string' ? ev.content : JSON.stringify(ev.content);
          // AG-UI results carry no error flag: agentrx's own result event rides in rawEvent.
          const failed = !!(ev.rawEvent && ev.rawEvent.result && ev.rawEvent.result.isError);
          t.card.appendChild(el('div', 'label', failed ? 'error' : 'result'));
          t.card.appendChild(el('pre', 'result', content));
          t.card.classList.add(failed ? 'failed' : 'done'); t.state.textContent = failed ? '\\u2717 failed' : '\\u2713 done';
          history.push({ id: ev.messageId || newId('result'), role: 'tool', toolCallId: ev.toolCallId, content });
          break;
        }
        case 'RUN_FINISHED': {
          terminal = true; status.textContent = 'run finished';
          const o = ev.outcome || {};
          if (o.type === 'success' && Array.isArray(o.pendingToolCallIds)) pending = o.pendingToolCallIds;
          if (o.type === 'interrupt' && Array.isArray(o.interrupts)) interrupts = o.interrupts;
          break;
        }
        case 'RUN_ERROR': terminal = true; add(el('div', 'error', 'Run failed' + (ev.code ? ' (' + ev.code + ')' : '') + ': ' + ev.message)); status.textContent = 'run failed'; break;
      }
    };
    try {
      const body = { threadId, runId, protocolVersion: '1.0', messages: history, tools: [ASK_USER], context: [], state: {}, forwardedProps: {} };
      if (resume) body.resume = resume;
      const res = await fetch(endpoint, { method: 'POST', headers, body: JSON.stringify(body), signal: controller.signal });
      if (!res.ok) {
        let detail = '';
        try { const b = await res.json(); detail = b.message + (b.problems ? ': ' + b.problems.join('; ') : ''); } catch { detail = res.statusText; }
        if (res.status === 401) { tokenBox.hidden = false; tokenBox.focus(); }
        // Refused: the message was not sent. It goes back into the input (after a 401), not twice into the log.
        history.length = before;
        if (res.status === 401 && bubble) bubble.remove();
        add(el('div', 'error', 'HTTP ' + res.status + ' \\u2014 ' + detail));
        setBusy(false, res.status === 401 ? 'enter the bearer token, then send again' : 'request refused');
        if (res.status === 401 && text !== undefined) input.value = text;
        return;
      }
      if (tokenBox.value) sessionStorage.setItem('agentrx-token', tokenBox.value);
      const reader = res.body.getReader();
      const decoder = new TextDecoder();
      let buf = '';
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buf += decoder.decode(value, { stream: true });
        let cut;
        while ((cut = buf.indexOf('\\n\\n')) >= 0) {
          const frame = buf.slice(0, cut); buf = buf.slice(cut + 2);
          const data = frame.split('\\n').filter((l) => l.startsWith('data:')).map((l) => l.slice(l.startsWith('data: ') ? 6 : 5)).join('\\n');
          if (data) onEvent(JSON.parse(data));
        }
      }
      if (!terminal) add(el('div', 'error', 'The stream ended without a terminal event.'));
      if (pending.length > 0 || interrupts.length > 0) {
        for (const n of texts.values()) n.classList.remove('streaming');
        controller = undefined;
        status.textContent = 'waiting for your answer';
        if (interrupts.length > 0) return void run(undefined, await confirmAll(interrupts));
        // The page's frontend tool asks in its card; a call of a tool the page does not have is answered as an error.
        const answers = await Promise.all(pending.map((id) => { const t = tools.get(id); return t && t.name === 'ask_user' ? askInCard(t) : Promise.resolve('error: this page has no tool named ' + (t ? t.name : id)); }));
        pending.forEach((id, i) => history.push({ id: newId('result'), role: 'tool', toolCallId: id, content: answers[i] }));
        return void run(undefined);
      }
      setBusy(false, terminal ? status.textContent : 'stream ended');
    } catch (err) {
      if (err.name === 'AbortError') { add(el('div', 'error', 'Stopped: the run was cancelled.')); setBusy(false, 'stopped'); }
      else { add(el('div', 'error', 'Network error: ' + err.message)); setBusy(false, 'error'); }
    } finally {
      for (const n of texts.values()) n.classList.remove('streaming');
      controller = undefined;
    }
  }
  input.focus();
})();
`;

const HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>agentrx · AG-UI chat</title>
<link rel="icon" href="data:,">
<style>${STYLE}</style>
</head>
<body>
<header><h1>agentrx</h1><span class="sub">AG-UI chat · tools run on the server</span><button id="new" type="button">New chat</button></header>
<main id="log" aria-live="polite"><p id="hint" class="hint">Ask something, e.g. “what is (17 + 25) * 3”.</p></main>
<div id="status" role="status"></div>
<form id="form" autocomplete="off">
<input id="prompt" name="prompt" placeholder="Message the agent…" aria-label="Message">
<input id="token" name="token" type="password" placeholder="Bearer token" aria-label="Bearer token" hidden>
<button id="send" type="submit">Send</button>
<button id="stop" type="button" disabled>Stop</button>
</form>
<script>${SCRIPT}</script>
</body>
</html>
`;

const hash = (text: string): string => `'sha256-${createHash('sha256').update(text, 'utf8').digest('base64')}'`;

/** The built-in chat page: its HTML and the Content-Security-Policy it is served with. */
export interface AgUiPage {
  /** The whole document (UTF-8). */
  readonly html: string;
  /**
   * A strict policy: nothing loads from anywhere; only this page's inline script and style run
   * (by hash); `fetch` goes to the same origin only.
   */
  readonly csp: string;
}

/** The built-in chat page served at `GET /` (see the module comment for what it does). */
export const aguiPage: AgUiPage = {
  html: HTML,
  csp: [
    "default-src 'none'",
    `script-src ${hash(SCRIPT)}`,
    `style-src ${hash(STYLE)}`,
    "connect-src 'self'",
    "img-src 'self' data:",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join('; '),
};
