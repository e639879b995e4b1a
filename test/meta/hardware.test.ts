import { readFileSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { detectLocalHardware, isLocalTarget, mergeHardware, parseNvidiaSmi, parseRocmSmi, parseXpuSmi, type ExecTool } from '../../src/meta/hardware.js';

describe('GPU tool output', () => {
  test('nvidia-smi csv (MiB): name, count, VRAM', () => {
    expect(parseNvidiaSmi('NVIDIA H200 NVL, 143771\n')).toEqual({ gpu: 'NVIDIA H200 NVL', gpuCount: 1, vram: '140 GB' });
    expect(parseNvidiaSmi('NVIDIA A100-SXM4-80GB, 81920\nNVIDIA A100-SXM4-80GB, 81920\n')).toEqual({ gpu: 'NVIDIA A100-SXM4-80GB', gpuCount: 2, vram: '160 GB (2 × 80 GB)' });
    expect(parseNvidiaSmi('\n')).toBeUndefined();
    // captured from a real H200 machine
    const real = readFileSync(join(import.meta.dirname, '..', 'fixtures', 'engines', 'nvidia-smi-h200.csv'), 'utf8');
    expect(parseNvidiaSmi(real)).toEqual({ gpu: 'NVIDIA H200', gpuCount: 1, vram: '140 GB' });
  });
  test('xpu-smi discovery -j', () => {
    const json = JSON.stringify({ device_list: [0, 1, 2, 3].map((i) => ({ device_id: i, device_name: 'Intel(R) Arc(TM) Pro B60 Graphics', memory_physical_size_byte: String(24 * 2 ** 30) })) });
    expect(parseXpuSmi(json)).toEqual({ gpu: 'Intel(R) Arc(TM) Pro B60 Graphics', gpuCount: 4, vram: '96 GB (4 × 24 GB)' });
    expect(parseXpuSmi('not json')).toBeUndefined();
  });
  test('rocm-smi --json', () => {
    const json = JSON.stringify({ card0: { 'Card Series': 'AMD Instinct MI300X', 'VRAM Total Memory (B)': String(192 * 2 ** 30) }, system: { 'Driver version': '6.8' } });
    expect(parseRocmSmi(json)).toEqual({ gpu: 'AMD Instinct MI300X', gpuCount: 1, vram: '192 GB' });
  });
});

describe('where the server runs', () => {
  test('loopback, localhost and this host are local; other hosts are not', () => {
    for (const u of ['http://127.0.0.1:8000', 'http://localhost:8000', 'http://[::1]:8000', `http://${os.hostname()}:1`]) expect(isLocalTarget(u), u).toBe(true);
    for (const u of ['http://10.255.255.254:8000', 'https://api.example.com', 'not a url']) expect(isLocalTarget(u), u).toBe(false);
  });
});

describe('detect and merge', () => {
  test('the first GPU tool that answers is used; missing tools are skipped; CPU, RAM, OS from the OS', async () => {
    const calls: string[] = [];
    const exec: ExecTool = async (cmd) => {
      calls.push(cmd);
      if (cmd === 'xpu-smi') return JSON.stringify({ device_list: [{ device_name: 'Intel Arc', memory_physical_size_byte: 2 ** 34 }] });
      return undefined; // nvidia-smi and rocm-smi absent
    };
    const d = await detectLocalHardware(exec);
    expect(calls.sort()).toEqual(['nvidia-smi', 'rocm-smi', 'xpu-smi']);
    expect(d.values).toMatchObject({ gpu: 'Intel Arc', gpuCount: 1, vram: '16 GB', ram: `${Math.round(os.totalmem() / 2 ** 30)} GB` });
    expect(d.values.cpu).toContain(os.cpus()[0]!.model.trim());
    expect(d.values.os).toContain(os.release());
    expect(d.from).toMatchObject({ gpu: 'xpu-smi', cpu: 'os', ram: 'os', os: 'os' });
  });

  test('no GPU tool: no GPU fields (never guessed)', async () => {
    const d = await detectLocalHardware(async () => undefined);
    expect(d.values.gpu).toBeUndefined();
    expect(d.values.gpuCount).toBeUndefined();
    expect(d.values.vram).toBeUndefined();
  });

  test('config wins per field; source names both', () => {
    const hw = mergeHardware({
      config: { gpu: 'H200 NVL 141GB', type: 'Discrete GPU' },
      detected: { values: { gpu: 'NVIDIA H200 NVL', gpuCount: 1, vram: '140 GB', cpu: 'Xeon', ram: '512 GB', os: 'Linux' }, from: { gpu: 'nvidia-smi', gpuCount: 'nvidia-smi', vram: 'nvidia-smi', cpu: 'os', ram: 'os', os: 'os' } },
    });
    expect(hw).toEqual({
      type: 'Discrete GPU',
      gpu: 'H200 NVL 141GB',
      gpuCount: 1,
      vram: '140 GB',
      cpu: 'Xeon',
      ram: '512 GB',
      os: 'Linux',
      source: 'config (type, gpu); detected on this machine (nvidia-smi: gpuCount, vram; os: cpu, ram, os)',
    });
  });

  test('a remote server without a config block: nothing but a source that says how to fill it', () => {
    expect(mergeHardware({})).toEqual({ source: expect.stringMatching(/not given.*set target\.hardware/) });
  });
});
