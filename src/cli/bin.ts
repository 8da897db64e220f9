#!/usr/bin/env -S node --max-semi-space-size=4
// The `ledger-indexer` command. The first line gives V8 a young generation of 4 MiB a space
// instead of Node's 16: a 200,000-record `sync` by key peaked at 220 MiB instead of 270 at the
// same speed (docs/performance.md). The image's entry point passes the same flag.
import { runProcess } from './process.js';

runProcess(process.argv.slice(2));
