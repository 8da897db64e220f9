import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createCommitPipeline, recordBytes } from '../../src/sync/commit-pipeline.js';

/** A commit the test ends by hand, so that "a commit is running" is a state it controls. */
class ManualCommits {
  readonly started: number[][] = [];
  private readonly running: Array<{ resolve(): void; reject(error: unknown): void }> = [];
  readonly commit = (pages: number[]): Promise<void> => {
    this.started.push(pages);
    return new Promise((resolve, reject) => this.running.push({ resolve, reject }));
  };
  /** Ends the oldest running commit (or the one at `index` among those running). */
  async end(error?: unknown, index = 0): Promise<void> {
    const [first] = this.running.splice(index, 1);
    if (error === undefined) first?.resolve();
    else first?.reject(error);
    await new Promise((resolve) => setImmediate(resolve));
  }
}

function pipelineOver(commits: ManualCommits, options: { maxPages?: number; lingerMs?: number } = {}) {
  const clock = { ms: 0 };
  const pipeline = createCommitPipeline<number>({
    commit: commits.commit,
    maxPages: options.maxPages ?? 3,
    lingerMs: options.lingerMs ?? 100,
    now: () => clock.ms,
  });
  return { pipeline, clock };
}

describe('commit pipeline', () => {
  it('commits the queued pages as one batch and never starts a commit before the one before ended', async () => {
    const commits = new ManualCommits();
    const { pipeline } = pipelineOver(commits);
    pipeline.add(1);
    pipeline.add(2);
    assert.equal(pipeline.queued, 2);
    await pipeline.submit();
    assert.deepEqual(commits.started, [[1, 2]]);
    assert.equal(pipeline.queued, 0);
    pipeline.add(3);
    let submitted = false;
    const second = pipeline.submit().then(() => {
      submitted = true;
    });
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(submitted, false, 'waits for the running commit');
    assert.deepEqual(commits.started, [[1, 2]]);
    await commits.end();
    await second;
    assert.deepEqual(commits.started, [[1, 2], [3]]);
    await commits.end();
    await pipeline.flush();
    assert.deepEqual(commits.started, [[1, 2], [3]], 'nothing left to commit');
  });

  it('is full at its most pages per batch', () => {
    const { pipeline } = pipelineOver(new ManualCommits(), { maxPages: 2 });
    pipeline.add(1);
    assert.equal(pipeline.full(), false);
    pipeline.add(2);
    assert.equal(pipeline.full(), true);
  });

  it('lingers from the first page queued, only while no commit runs', async () => {
    const commits = new ManualCommits();
    const { pipeline, clock } = pipelineOver(commits, { lingerMs: 100 });
    assert.equal(pipeline.lingered(), false, 'nothing queued');
    clock.ms = 50;
    pipeline.add(1);
    clock.ms = 149;
    assert.equal(pipeline.lingered(), false);
    clock.ms = 150;
    assert.equal(pipeline.lingered(), true);
    await pipeline.submit();
    pipeline.add(2);
    clock.ms = 1000;
    assert.equal(pipeline.lingered(), false, 'a commit is running: nothing could be committed anyway');
    await commits.end();
    assert.equal(pipeline.lingered(), true, 'queued at 150 ms');
  });

  it('lingers from when the batch was opened, when that was before its first page', async () => {
    const commits = new ManualCommits();
    const { pipeline, clock } = pipelineOver(commits, { lingerMs: 100 });
    pipeline.openBatch();
    clock.ms = 80;
    pipeline.add(1);
    clock.ms = 100;
    assert.equal(pipeline.lingered(), true);
    await pipeline.submit();
    await commits.end();
    clock.ms = 150;
    pipeline.add(2);
    clock.ms = 200;
    assert.equal(pipeline.lingered(), false, 'a submitted batch takes its clock with it');
  });

  it('keeps a failed commit and throws it at the next submit, without committing later pages', async () => {
    const commits = new ManualCommits();
    const { pipeline } = pipelineOver(commits);
    pipeline.add(1);
    await pipeline.submit();
    await commits.end(new Error('connection lost'));
    assert.throws(() => pipeline.check(), /connection lost/);
    pipeline.add(2);
    await assert.rejects(pipeline.submit(), /connection lost/);
    await assert.rejects(pipeline.settled(), /connection lost/);
    await assert.rejects(pipeline.flush(), /connection lost/);
    assert.deepEqual(commits.started, [[1]]);
  });

  it('flush commits what is queued and waits for it', async () => {
    const commits = new ManualCommits();
    const { pipeline } = pipelineOver(commits);
    pipeline.add(1);
    let flushed = false;
    const flushing = pipeline.flush().then(() => {
      flushed = true;
    });
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(commits.started, [[1]]);
    assert.equal(flushed, false);
    await commits.end();
    await flushing;
    assert.equal(flushed, true);
  });
});

describe('commit pipeline by bytes', () => {
  it('is full at its byte budget before its page count, so memory follows bytes, not records', () => {
    const pipeline = createCommitPipeline<number>({
      commit: async () => {},
      maxPages: 16,
      maxBytes: 100,
      sizeOf: (bytes) => bytes,
      lingerMs: 0,
    });
    pipeline.add(60);
    assert.equal(pipeline.full(), false);
    pipeline.add(60);
    assert.equal(pipeline.full(), true, 'two pages of 60 bytes fill a batch of 100');
  });

  it('counts a record as its data and a kilobyte for the rest', () => {
    assert.equal(recordBytes([{ data: '' }, { data: 'x'.repeat(5000) }]), 2 * 1024 + 5000);
  });
});
