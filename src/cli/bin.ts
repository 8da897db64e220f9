#!/usr/bin/env node
// The `ledger-indexer` command.
import { runProcess } from './process.js';

runProcess(process.argv.slice(2));
