/**
 * The viewer's page: markup only — no inline script or style (the CSP forbids them), its one
 * script and one style sheet from this server, each URL with the token (base64url: nothing in
 * it needs escaping in HTML or a URL).
 */
export function pageHtml(token: string): string {
  if (!/^[A-Za-z0-9_-]+$/.test(token)) throw new Error('the token is not base64url');
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="referrer" content="no-referrer">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>session-sidecar</title>
<link rel="stylesheet" href="/style.css?token=${token}">
</head>
<body>
<aside id="side">
<input id="search" type="search" placeholder="Search sessions and messages" autocomplete="off" spellcheck="false">
<ul id="sessions"></ul>
</aside>
<main id="main">
<section id="header"><p class="hint">Choose a session.</p></section>
<div id="transcript"></div>
<p id="live"></p>
</main>
<script src="/app.js?token=${token}"></script>
</body>
</html>
`;
}
