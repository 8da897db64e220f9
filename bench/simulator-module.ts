import type { Simulator, SimulatorOptions } from '../src/simulator/types.js';

/** Where `createSimulator` may live while the simulator is being written. */
const CANDIDATES = [
  '../src/simulator/index.js',
  '../src/simulator/simulator.js',
  '../src/simulator/create-simulator.js',
];

/** Loads the project's `createSimulator`; throws "not available" when it has not landed. */
export async function loadCreateSimulator(): Promise<(options: SimulatorOptions) => Simulator> {
  const problems: string[] = [];
  for (const path of CANDIDATES) {
    try {
      const module = (await import(path)) as { createSimulator?: (options: SimulatorOptions) => Simulator };
      if (typeof module.createSimulator === 'function') return module.createSimulator;
      problems.push(`${path}: no createSimulator export`);
    } catch (error) {
      problems.push(`${path}: ${error instanceof Error ? error.message.split('\n')[0] : String(error)}`);
    }
  }
  throw new Error(`the simulator (createSimulator) is not available: ${problems.join('; ')}`);
}
