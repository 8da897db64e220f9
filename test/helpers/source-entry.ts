import { join } from 'node:path';

/** Node arguments that run the command from its TypeScript sources, as the tests run it unless they say otherwise. */
export const SOURCE_ENTRY = ['--import', 'tsx', join('src', 'cli', 'bin.ts')];
