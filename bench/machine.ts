import { cpus, freemem, totalmem } from 'node:os';

/** The machine a run was measured on. */
export interface MachineInfo {
  cores: number;
  cpuModel: string;
  memoryBytes: number;
  freeMemoryBytes: number;
  node: string;
  platform: string;
  postgres: string | null;
}

export function describeMachine(postgres: string | null): MachineInfo {
  const list = cpus();
  return {
    cores: list.length,
    cpuModel: list[0]?.model.trim() ?? 'unknown',
    memoryBytes: totalmem(),
    freeMemoryBytes: freemem(),
    node: process.version,
    platform: `${process.platform}-${process.arch}`,
    postgres,
  };
}
