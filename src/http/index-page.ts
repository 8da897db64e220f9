/** The page at `/`: what the surface offers, linked. A status page with charts is for later. */
export function indexPage(): string {
  const links = [
    ['/health', 'the process runs and the database answers'],
    ['/ready', 'every followed stream is backfilled and its last completeness check holds'],
    ['/status', 'the JSON of `ledger-indexer status --json`'],
    ['/metrics', 'Prometheus metrics (prefix ledger_indexer_)'],
  ]
    .map(([path, what]) => `    <li><a href="${path}">${path}</a>: ${what}</li>`)
    .join('\n');
  return `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>ledger-indexer</title></head>
<body>
  <h1>ledger-indexer</h1>
  <ul>
${links}
  </ul>
</body>
</html>
`;
}
