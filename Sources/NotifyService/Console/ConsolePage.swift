/// The live console: one HTML page with inline CSS and JavaScript (no build step). It renders the
/// entries it is given inline at once, then follows `/console/events` (Server-Sent Events).
///
/// The flow column lists events in (as sentences), decisions, commands out and outcomes as they
/// happen, each with its event time. The other column has one card per message: its text, time and
/// trace id, the decisions against delivering it, and each command drawn as an iOS banner and as an
/// Android notification (title, subtitle, body, sender avatar, group name, attachment thumbnail,
/// actions) with the sink's outcome; a local notification the app did not take and the push that
/// replaced it say so. Everything from the feed is inserted as text, never as markup.
enum ConsolePage {
    /// The page with `initial` (entries' JSON) embedded.
    static func html(initial: [ConsoleFeed.Item]) -> String {
        // "</" would end the script element early; JSON allows the escaped form.
        let embedded = "[" + initial.map(\.json).joined(separator: ",") + "]"
        let safe = embedded.replacingOccurrences(of: "</", with: "<\\/")
        return head
            + "<script>const INITIAL_ENTRIES = \(safe);</script>\n<script>\(script)</script>\n</body>\n</html>\n"
    }

    private static let head = """
        <!doctype html>
        <html lang="en">
        <head>
        <meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <title>notify · live console</title>
        <style>
        :root { --bg:#0f1115; --panel:#171a21; --line:#262a33; --text:#e6e8ee; --muted:#8b93a7;
                --event:#5b9cff; --decision:#f2b84b; --command:#4cc38a; --outcome:#c77dff; --bad:#ff6b6b; }
        * { box-sizing: border-box; }
        body { margin:0; font:14px/1.4 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif; background:var(--bg); color:var(--text); }
        header { display:flex; align-items:center; gap:18px; padding:12px 20px; border-bottom:1px solid var(--line); background:var(--panel); }
        header h1 { font-size:16px; margin:0; font-weight:600; }
        .counter { color:var(--muted); } .counter b { color:var(--text); }
        #status { margin-left:auto; color:var(--muted); }
        main { display:grid; grid-template-columns: minmax(340px, 1fr) minmax(560px, 1.6fr); gap:0; height:calc(100vh - 49px); }
        section { overflow:auto; padding:12px 16px; }
        section + section { border-left:1px solid var(--line); }
        h2 { font-size:12px; text-transform:uppercase; letter-spacing:.08em; color:var(--muted); margin:4px 0 10px; }
        .row { display:grid; grid-template-columns: 78px 1fr; gap:8px; padding:6px 8px; border-radius:6px; margin-bottom:4px; background:var(--panel); }
        .kind { font-size:11px; font-weight:700; text-transform:uppercase; padding:2px 6px; border-radius:4px; text-align:center; align-self:start; color:#0b0d12; }
        .kind.event { background:var(--event); } .kind.decision { background:var(--decision); }
        .kind.command { background:var(--command); } .kind.outcome { background:var(--outcome); }
        .row .detail { overflow-wrap:anywhere; } .row .sub { color:var(--muted); font-size:12px; }
        .preview { border:1px solid var(--line); border-radius:10px; padding:10px 12px; margin-bottom:14px; background:var(--panel); }
        .preview .to { color:var(--muted); font-size:12px; margin-bottom:8px; display:flex; gap:8px; flex-wrap:wrap; }
        .preview .to b { color:var(--text); }
        .tag { border:1px solid var(--line); border-radius:10px; padding:0 7px; }
        .tag.delivered { color:var(--command); border-color:var(--command); }
        .tag.failed, .tag.token-invalid, .tag.expired, .tag.undeliverable-local { color:var(--bad); border-color:var(--bad); }
        .devices { display:grid; grid-template-columns: 1fr 1fr; gap:12px; align-items:start; }
        .device { opacity:.55; } .device.target { opacity:1; }
        .device .label { font-size:11px; color:var(--muted); margin-bottom:4px; }
        .ios { background:rgba(245,245,247,.92); color:#111; border-radius:18px; padding:10px 12px; display:grid; grid-template-columns:38px 1fr auto; gap:10px; align-items:start; box-shadow:0 4px 18px rgba(0,0,0,.35); }
        .ios .avatar-wrap { position:relative; width:38px; height:38px; }
        .ios .appicon { position:absolute; right:-4px; bottom:-4px; width:16px; height:16px; border-radius:4px; background:linear-gradient(135deg,#4cc38a,#2f80ed); border:1.5px solid #f5f5f7; }
        .ios .top { display:flex; justify-content:space-between; gap:8px; }
        .ios .title { font-weight:600; font-size:14px; }
        .ios .when { color:#6e6e73; font-size:12px; white-space:nowrap; }
        .ios .subtitle { font-weight:500; font-size:13px; }
        .ios .body { font-size:13px; display:-webkit-box; -webkit-line-clamp:4; -webkit-box-orient:vertical; overflow:hidden; }
        .ios .actions, .android .actions { display:flex; gap:6px; margin-top:6px; flex-wrap:wrap; }
        .ios .actions span { background:rgba(0,0,0,.07); border-radius:8px; padding:3px 10px; font-size:12px; }
        .thumb { width:44px; height:44px; border-radius:8px; object-fit:cover; background:#d0d3da; display:flex; align-items:center; justify-content:center; font-size:9px; color:#555; overflow:hidden; }
        .android { background:#fff; color:#1f1f1f; border-radius:22px; padding:12px 14px; box-shadow:0 4px 18px rgba(0,0,0,.35); font-family:Roboto,system-ui,sans-serif; }
        .android .app { display:flex; align-items:center; gap:6px; font-size:12px; color:#5f6368; }
        .android .smallicon { width:14px; height:14px; border-radius:50%; background:#1a73e8; }
        .android .content { display:grid; grid-template-columns:40px 1fr; gap:10px; margin-top:8px; }
        .android .conversation { font-weight:600; font-size:14px; }
        .android .sender { font-weight:600; }
        .android .message { font-size:14px; color:#3c4043; }
        .android .picture { margin-top:8px; width:100%; max-height:140px; object-fit:cover; border-radius:12px; background:#e8eaed; display:flex; align-items:center; justify-content:center; min-height:60px; color:#5f6368; font-size:11px; overflow:hidden; }
        .android .actions span { color:#1a73e8; font-weight:600; font-size:13px; padding:4px 10px 0 0; }
        .avatar { width:38px; height:38px; border-radius:50%; background:#8e8e93; color:#fff; display:flex; align-items:center; justify-content:center; font-weight:600; font-size:15px; overflow:hidden; }
        .avatar img, .thumb img { width:100%; height:100%; object-fit:cover; }
        .silent { color:#6e6e73; font-size:13px; padding:6px 0; }
        .unresolved { color:#b26a00; font-size:11px; }
        .empty { color:var(--muted); padding:20px 0; }
        .card { border:1px solid var(--line); border-radius:12px; padding:10px 12px; margin-bottom:16px; background:#12151b; }
        .card-head { display:flex; gap:10px; align-items:baseline; flex-wrap:wrap; margin-bottom:8px; }
        .card-title { font-weight:600; } .card-meta, .card-trace { color:var(--muted); font-size:12px; }
        .card-trace { font-family:ui-monospace,monospace; }
        .card-decision { color:var(--decision); font-size:13px; margin:2px 0 6px; }
        .fallback { color:var(--decision); font-size:12px; }
        </style>
        </head>
        <body>
        <header>
          <h1>notify · live console</h1>
          <span class="counter">events <b id="count-event">0</b></span>
          <span class="counter">decisions <b id="count-decision">0</b></span>
          <span class="counter">commands <b id="count-command">0</b></span>
          <span class="counter">outcomes <b id="count-outcome">0</b></span>
          <span id="status">connecting…</span>
        </header>
        <main>
          <section><h2>Flow</h2><div id="flow"><div class="empty" id="flow-empty">Nothing has happened yet.</div></div></section>
          <section><h2>Notifications as devices show them</h2><div id="previews"><div class="empty" id="previews-empty">No notifications yet.</div></div></section>
        </main>

        """

    private static let script = #"""
        "use strict";
        const counts = { event: 0, decision: 0, command: 0, outcome: 0 };
        // One card per message (or per command without a message): its decisions, its commands as devices
        // show them, each command's outcome, and the local-to-push fallbacks between them.
        const cards = new Map();          // card key -> { box, name, meta, trace, decisions, fallbacks }
        const deliveries = new Map();     // command id -> { card, box, tag, note, userId, deviceId, path }
        const earlyOutcomes = new Map();  // command id -> an outcome that arrived before its command
        let lastSequence = 0;

        function el(tag, className, text) {
          const node = document.createElement(tag);
          if (className) node.className = className;
          if (text !== undefined && text !== null) node.textContent = String(text);
          return node;
        }
        function safeImageURL(url) {
          return typeof url === "string" && /^(https?:|data:image\/)/i.test(url) ? url : null;
        }
        function initials(name) {
          const words = String(name || "?").replace(/^[@#]+/, "").trim().split(/\s+/).filter(Boolean);
          return ((words[0] || "?")[0] + (words.length > 1 ? words[words.length - 1][0] : "")).toUpperCase();
        }
        // A box showing `label` until the image at `url` has loaded. The image is in the document from
        // the start (hidden), so the page's load event waits for it.
        function imageBox(className, label, url) {
          const box = el("div", className);
          const text = el("span", null, label);
          box.appendChild(text);
          const src = safeImageURL(url);
          if (src) {
            const img = el("img"); img.alt = ""; img.hidden = true;
            img.onload = () => { text.remove(); img.hidden = false; };
            img.onerror = () => img.remove();
            box.appendChild(img);
            img.src = src;
          }
          return box;
        }
        function avatar(name, url) {
          return imageBox("avatar", initials(name), url);
        }
        function thumbnail(className, p) {
          const isImage = /^image\//.test(p.attachmentMimeType || "");
          return imageBox(className, p.attachmentMimeType || "attachment", isImage ? p.attachmentURL : null);
        }
        // An RFC 3339 time as the local clock time, HH:MM:SS ("" when there is none).
        function clock(iso) {
          const date = iso ? new Date(iso) : null;
          if (!date || isNaN(date.getTime())) return "";
          return date.toLocaleTimeString("en-GB", { hour12: false });
        }
        function bump(kind) {
          counts[kind] += 1;
          document.getElementById("count-" + kind).textContent = counts[kind];
        }

        function iosBanner(p) {
          const banner = el("div", "ios");
          const wrap = el("div", "avatar-wrap");
          wrap.appendChild(avatar(p.senderName || p.title, p.senderImageURL));
          wrap.appendChild(el("div", "appicon"));
          banner.appendChild(wrap);
          const text = el("div");
          const top = el("div", "top");
          top.appendChild(el("span", "title", p.title));
          top.appendChild(el("span", "when", clock(p.at) || "now"));
          text.appendChild(top);
          if (p.subtitle) text.appendChild(el("div", "subtitle", p.subtitle));
          text.appendChild(el("div", "body", p.body));
          if (!p.identityResolved) text.appendChild(el("div", "unresolved", "sender identity not resolved"));
          if (p.actions.length) {
            const actions = el("div", "actions");
            p.actions.forEach(a => actions.appendChild(el("span", null, a)));
            text.appendChild(actions);
          }
          banner.appendChild(text);
          if (p.attachmentURL) banner.appendChild(thumbnail("thumb", p)); else banner.appendChild(el("div"));
          return banner;
        }

        function androidNotification(p) {
          const card = el("div", "android");
          const app = el("div", "app");
          app.appendChild(el("span", "smallicon"));
          app.appendChild(el("span", null, "Notify" + (p.groupName ? " • " + p.groupName : "") + " • " + (clock(p.at) || "now")));
          card.appendChild(app);
          const content = el("div", "content");
          const pic = avatar(p.senderName || p.title, p.senderImageURL);
          content.appendChild(pic);
          const text = el("div");
          text.appendChild(el("div", "conversation", p.groupName || p.senderName || p.title));
          const message = el("div", "message");
          if (p.groupName && p.senderName) {
            message.appendChild(el("span", "sender", p.senderName + ": "));
          }
          message.appendChild(document.createTextNode(p.body));
          text.appendChild(message);
          if (p.attachmentURL) text.appendChild(thumbnail("picture", p));
          if (p.actions.length) {
            const actions = el("div", "actions");
            p.actions.forEach(a => actions.appendChild(el("span", null, a.toUpperCase())));
            text.appendChild(actions);
          }
          content.appendChild(text);
          card.appendChild(content);
          return card;
        }

        function cardFor(key, title) {
          let card = cards.get(key);
          if (card) return card;
          const box = el("div", "card");
          box.dataset.card = key;
          const head = el("div", "card-head");
          const name = el("span", "card-title", title);
          const meta = el("span", "card-meta");
          const trace = el("span", "card-trace");
          head.appendChild(name); head.appendChild(meta); head.appendChild(trace);
          box.appendChild(head);
          const decisions = el("div", "card-decisions");
          box.appendChild(decisions);
          const list = document.getElementById("previews");
          document.getElementById("previews-empty")?.remove();
          list.insertBefore(box, list.firstChild);
          card = { box, name, meta, trace, decisions, fallbacks: new Map() };
          cards.set(key, card);
          return card;
        }
        function messageCard(messageId) {
          return cardFor("message " + messageId, "message " + messageId);
        }
        function showTrace(card, traceId) {
          if (traceId && !card.trace.textContent) card.trace.textContent = "trace " + traceId;
        }

        // A local notification the app could not take, then the push that replaced it: both say so.
        function linkFallback(card, userId, deviceId) {
          const reason = card.fallbacks.get(userId + "/" + deviceId);
          if (reason === undefined) return;
          for (const delivery of deliveries.values()) {
            if (delivery.card !== card || delivery.userId !== userId || delivery.deviceId !== deviceId) continue;
            if (delivery.path === "local") delivery.note.textContent = "the app did not take it (" + reason + "): a push follows";
            if (delivery.path === "push") delivery.note.textContent = "fallback: sent as a push after local was undeliverable (" + reason + ")";
          }
        }

        function setOutcome(delivery, entry) {
          delivery.tag.textContent = entry.outcome + (entry.reason ? " (" + entry.reason + ")" : "");
          delivery.tag.className = "tag outcome " + entry.outcome;
          delivery.box.dataset.outcome = entry.outcome;
          showTrace(delivery.card, entry.traceId);
          if (entry.outcome === "undeliverable-local") {
            delivery.card.fallbacks.set(delivery.userId + "/" + delivery.deviceId, entry.reason || "no reason given");
            linkFallback(delivery.card, delivery.userId, delivery.deviceId);
          }
        }

        function addPreview(entry) {
          const p = Object.assign({ at: entry.eventAt }, entry.preview);
          const card = entry.messageId ? messageCard(entry.messageId)
            : cardFor("command " + p.commandId, p.silent ? "badge update" : "notification");
          if (!card.meta.textContent) card.meta.textContent = [entry.conversationId, clock(entry.eventAt)].filter(Boolean).join(" · ");
          const box = el("div", "preview");
          box.dataset.commandId = p.commandId;
          box.dataset.user = p.userId;
          box.dataset.device = p.deviceId;
          box.dataset.path = p.path;
          const to = el("div", "to");
          to.appendChild(el("b", null, p.userId));
          to.appendChild(el("span", null, p.deviceId));
          to.appendChild(el("span", "tag", p.platform + " · " + p.provider));
          to.appendChild(el("span", "tag", p.path));
          if (p.badge !== null && p.badge !== undefined) to.appendChild(el("span", "tag", "badge " + p.badge));
          const outcome = el("span", "tag outcome", "pending");
          to.appendChild(outcome);
          box.appendChild(to);
          const note = el("div", "fallback");
          box.appendChild(note);
          if (p.silent) {
            box.appendChild(el("div", "silent", "Background push: nothing shown; badge " + (p.badge ?? "–") +
              (p.threadId ? ", clears thread " + p.threadId : "")));
          } else {
            const devices = el("div", "devices");
            const ios = el("div", "device" + (p.platform === "ios" ? " target" : ""));
            ios.appendChild(el("div", "label", "iOS banner"));
            ios.appendChild(iosBanner(p));
            const android = el("div", "device" + (p.platform === "android" ? " target" : ""));
            android.appendChild(el("div", "label", "Android notification"));
            android.appendChild(androidNotification(p));
            devices.appendChild(ios);
            devices.appendChild(android);
            box.appendChild(devices);
          }
          card.box.appendChild(box);
          const delivery = { card, box, tag: outcome, note, userId: p.userId, deviceId: p.deviceId, path: p.path };
          deliveries.set(p.commandId, delivery);
          linkFallback(card, p.userId, p.deviceId);
          const early = earlyOutcomes.get(p.commandId);
          if (early) { earlyOutcomes.delete(p.commandId); setOutcome(delivery, early); }
        }

        function flowRow(entry) {
          const row = el("div", "row");
          row.appendChild(el("span", "kind " + entry.kind, entry.kind));
          const detail = el("div", "detail");
          let main = "", sub = "";
          if (entry.kind === "event") {
            main = entry.type + ": " + entry.summary; sub = entry.topic + (entry.key ? " · key " + entry.key : "");
          } else if (entry.kind === "decision") {
            main = "no notification for " + entry.userId + (entry.deviceId ? " / " + entry.deviceId : "") + ": " + entry.reason;
            sub = [entry.conversationId, entry.messageId].filter(Boolean).join(" · ");
          } else if (entry.kind === "command") {
            const p = entry.preview;
            main = p.path + " to " + p.userId + " / " + p.deviceId + " (" + p.platform + ", " + p.provider + ")" +
              (p.silent ? ": background badge " + p.badge : ": " + p.title + ": " + p.body);
            sub = entry.messageId ? "message " + entry.messageId : "";
          } else if (entry.kind === "outcome") {
            main = entry.outcome + (entry.reason ? " (" + entry.reason + ")" : "") + " by " + entry.sink + " for " + entry.userId + " / " + entry.deviceId;
            sub = entry.messageId ? "message " + entry.messageId : "";
          }
          const when = clock(entry.eventAt);
          detail.appendChild(el("div", null, main));
          detail.appendChild(el("div", "sub", [when, sub].filter(Boolean).join(" · ")));
          row.appendChild(detail);
          const flow = document.getElementById("flow");
          document.getElementById("flow-empty")?.remove();
          flow.insertBefore(row, flow.firstChild);
        }

        function show(entry) {
          if (entry.seq <= lastSequence) return;
          lastSequence = entry.seq;
          if (!(entry.kind in counts)) return;
          bump(entry.kind);
          flowRow(entry);
          if (entry.kind === "event" && entry.type === "message.received" && entry.messageId) {
            const card = messageCard(entry.messageId);
            card.name.textContent = entry.summary;
            card.meta.textContent = ["message " + entry.messageId, clock(entry.eventAt)].filter(Boolean).join(" · ");
            showTrace(card, entry.traceId);
          } else if (entry.kind === "decision" && entry.messageId) {
            messageCard(entry.messageId).decisions.appendChild(el("div", "card-decision",
              "no notification for " + entry.userId + (entry.deviceId ? " / " + entry.deviceId : "") + ": " + entry.reason));
          } else if (entry.kind === "command") {
            addPreview(entry);
          } else if (entry.kind === "outcome") {
            const delivery = deliveries.get(entry.commandId);
            if (delivery) setOutcome(delivery, entry); else earlyOutcomes.set(entry.commandId, entry);
          }
        }

        INITIAL_ENTRIES.forEach(show);
        const status = document.getElementById("status");
        if (window.EventSource) {
          const source = new EventSource("/console/events?after=" + lastSequence);
          source.addEventListener("entry", message => show(JSON.parse(message.data)));
          source.onopen = () => { status.textContent = "live"; };
          source.onerror = () => { status.textContent = "reconnecting…"; };
        } else {
          status.textContent = "live updates unavailable";
        }
        """#
}
