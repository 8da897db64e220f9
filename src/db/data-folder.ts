import { access, constants, mkdir, stat } from 'node:fs/promises';
import { dirname } from 'node:path';
import { ENV } from '../config.js';
import { DataFolderError } from '../errors.js';

/**
 * PGlite's file system reports errors as Emscripten errno numbers (`ErrnoError`, not an `Error`):
 * the ones worth naming, by their POSIX names.
 */
const EMSCRIPTEN_ERRNO: Readonly<Record<number, string>> = {
  2: 'EACCES',
  20: 'EEXIST',
  29: 'EIO',
  31: 'EISDIR',
  44: 'ENOENT',
  51: 'ENOSPC',
  54: 'ENOTDIR',
  63: 'EPERM',
  69: 'EROFS',
};

const WORDS: Readonly<Record<string, string>> = {
  EACCES: 'permission denied',
  EPERM: 'operation not permitted',
  EROFS: 'read-only file system',
  ENOENT: 'no such file or folder',
  ENOTDIR: 'not a folder',
  EEXIST: 'already exists',
  ENOSPC: 'no space left on the device',
  EIO: 'input/output error',
  EISDIR: 'is a folder',
};

/** Codes that say the folder may not be written, as opposed to holding something unreadable. */
const CANNOT_WRITE = new Set(['EACCES', 'EPERM', 'EROFS', 'ENOSPC']);

const WRITE_HINT = `set ${ENV.dataDir} to a folder this user may write`;

/**
 * The file system error code of `error`: Node's `code`, or the name of PGlite's Emscripten errno.
 * `undefined` for anything else.
 */
export function fileErrorCode(error: unknown): string | undefined {
  if (error === null || typeof error !== 'object') return undefined;
  const { code, errno } = error as { code?: unknown; errno?: unknown };
  if (typeof code === 'string' && /^E[A-Z]+$/.test(code)) return code;
  if (typeof errno === 'number' && !(error instanceof Error))
    return EMSCRIPTEN_ERRNO[errno] ?? `errno ${errno}`;
  return undefined;
}

function reasonOf(code: string | undefined, error: unknown): string {
  if (code !== undefined) return `${WORDS[code] ?? 'file system error'} (${code})`;
  return error instanceof Error ? (error.message.split('\n')[0] ?? '') : 'unknown failure';
}

/**
 * Makes sure the embedded database's folder exists and may be written: creates it and its
 * missing parents, one level at a time. Node's recursive `mkdir` spins forever where the parent
 * exists and still refuses new folders (`/proc/x`): here that fails at once. Throws
 * {@link DataFolderError}.
 */
export async function prepareDataFolder(path: string): Promise<void> {
  try {
    await makeFolder(path);
  } catch (error) {
    if (error instanceof DataFolderError) throw error;
    const code = fileErrorCode(error);
    throw new DataFolderError({
      path,
      code,
      cause: error,
      message: `cannot create the data folder ${path}: ${reasonOf(code, error)}; ${WRITE_HINT}`,
    });
  }
  try {
    await access(path, constants.W_OK | constants.X_OK);
  } catch (error) {
    throw cannotWrite(path, error);
  }
}

async function makeFolder(path: string): Promise<void> {
  try {
    await mkdir(path);
    return;
  } catch (error) {
    const code = fileErrorCode(error);
    if (code === 'EEXIST') return mustBeFolder(path, error);
    const parent = dirname(path);
    if (code !== 'ENOENT' || parent === path) throw error;
    // A parent that exists yet refuses the folder (a virtual file system): no point in retrying.
    if (await isFolder(parent)) {
      throw new DataFolderError({
        path,
        code,
        cause: error,
        message: `cannot create the data folder ${path}: ${parent} takes no new folders (${code}); ${WRITE_HINT}`,
      });
    }
    await makeFolder(parent);
  }
  try {
    await mkdir(path);
  } catch (error) {
    if (fileErrorCode(error) !== 'EEXIST') throw error;
    await mustBeFolder(path, error);
  }
}

async function mustBeFolder(path: string, cause: unknown): Promise<void> {
  if (await isFolder(path)) return;
  throw new DataFolderError({
    path,
    code: 'ENOTDIR',
    cause,
    message: `cannot use the data folder ${path}: it is a file, not a folder; ${WRITE_HINT}`,
  });
}

async function isFolder(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isDirectory();
  } catch {
    return false;
  }
}

function cannotWrite(path: string, error: unknown): DataFolderError {
  const code = fileErrorCode(error);
  return new DataFolderError({
    path,
    code,
    cause: error,
    message: `cannot write the data folder ${path}: ${reasonOf(code, error)}; ${WRITE_HINT}`,
  });
}

/**
 * The one-line error of PGlite failing to open `path`: a folder it may not write, or one that
 * holds something other than a database it can open (files of another program or of another
 * PGlite version, or a database left broken).
 */
export function pgliteOpenError(path: string, error: unknown): DataFolderError {
  const code = fileErrorCode(error);
  if (code !== undefined && CANNOT_WRITE.has(code)) return cannotWrite(path, error);
  return new DataFolderError({
    path,
    code,
    cause: error,
    message:
      `cannot open the embedded database in ${path}: ${reasonOf(code, error)}; the folder holds ` +
      `something other than a database this version can open: move it away, or set ${ENV.dataDir} ` +
      'to a new folder',
  });
}
