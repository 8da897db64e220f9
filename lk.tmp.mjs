import pg from 'pg';
const url = 'postgres://postgres@127.0.0.1:5432/tailrun';
const hashes = (await (new pg.Client(url)).connect().then(async function(){ return null; }).catch(()=>null), null);
const c0 = new pg.Client(url); await c0.connect();
const hs = (await c0.query('SELECT ledger_hash FROM ledger_transactions ORDER BY random() LIMIT 5000')).rows.map(r => r.ledger_hash);
await c0.end();
const SEL = `SELECT t.raw_id::text AS raw_id, t.record_id, t.token_symbol, t.action, t.from_account, t.to_account, t.amount::text AS amount, t.fee::text, t.fee_recipient, t.nonce::text, t.token_id, t.chain_type, t.chain_id, t.data, t.version, t.sig, t.ledger_hash, t.status, t.internal_status, t.timestamp_ms::text, t.target_chain_tx_hash, t.express_chain_tx_hash, t.express_withdraw_fee, t.express_refund_ledger_hash, t.express_err FROM ledger_transactions t WHERE t.ledger_hash IN ($1, $2) ORDER BY t.raw_id LIMIT 1`;
const COV = `SELECT key, watermark::text AS watermark, head_raw_id::text AS head_raw_id, head_seen_at, last_success_at FROM sync_streams WHERE key = ANY ($1::text[])`;
const ONE = `SELECT rec.*, s.key AS cov_key, s.watermark::text AS cov_watermark, s.head_raw_id::text AS cov_head, s.head_seen_at, s.last_success_at FROM (SELECT 1) one LEFT JOIN LATERAL (${SEL.replace('$1','$1').replace('$2','$2')}) rec ON true LEFT JOIN sync_streams s ON s.key = ANY ($3::text[])`;
for (const mode of ['tx5', 'one', 'tx5', 'one']) {
  const pool = new pg.Pool({ connectionString: url, max: 4, options: mode === 'one' ? '-c default_transaction_read_only=on -c statement_timeout=3000' : undefined });
  let i = 0; const N = 8000; const t0 = Date.now();
  await Promise.all(Array.from({ length: 64 }, async () => {
    while (i < N) { const h = hs[i++ % hs.length];
      if (mode === 'tx5') { const c = await pool.connect(); try { await c.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY'); await c.query('SET LOCAL statement_timeout = 3000'); await c.query(SEL, [h, h.toLowerCase()]); await c.query(COV, [['txs']]); await c.query('COMMIT'); } finally { c.release(); } }
      else { await pool.query(ONE, [h, h.toLowerCase(), ['txs']]); }
    }
  }));
  console.log(mode, Math.round(N / ((Date.now() - t0) / 1000)), '/s');
  await pool.end();
}
