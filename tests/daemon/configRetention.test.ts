import { describe, expect, it } from 'vitest';
import { ConfigError, parseConfig } from '../../daemon/config/config.ts';
import { configTemplate } from '../../daemon/config/configTemplate.ts';
import { configChanges } from '../../daemon/config/configTightening.ts';

// `[audit] rotate_bytes`, `keep_files`, `keep_hours` and `[retention] requests_days`, `max_requests`: read, checked, and
// judged as a tightening or a loosening.

const template = configTemplate({
  relayUrl: 'https://latch.example.com',
  hostName: 'box',
  fleet: 'fleet-1',
  quorum: 1,
});
const parse = (text: string) => parseConfig(text, 'config.toml', {});
const withSetting = (from: string, to: string) => {
  expect(template).toContain(from);
  return template.replace(from, to);
};

describe('the retention settings', () => {
  it('are in the template latch init writes, at their defaults', () => {
    const config = parse(template);
    expect(config.audit).toEqual({ content: 'full', rotateBytes: 10_485_760, keepFiles: 10, keepHours: 24 });
    expect(config.retention).toEqual({ requestsDays: 30, maxRequests: 10_000 });
  });

  it('take the same defaults in a config written before they existed', () => {
    const older = template
      .replace(/^rotate_bytes = .*$/m, '')
      .replace(/^keep_files = .*$/m, '')
      .replace(/^keep_hours = .*$/m, '')
      .replace(/^\[retention\]$/m, '')
      .replace(/^requests_days = .*$/m, '')
      .replace(/^max_requests = .*$/m, '');
    expect(parse(older)).toMatchObject(parse(template));
  });

  it('take a fractional number of days', () => {
    expect(parse(withSetting('requests_days = 30', 'requests_days = 0.001')).retention.requestsDays).toBe(
      0.001,
    );
    expect(parse(withSetting('requests_days = 30', 'requests_days = 7.5')).retention.requestsDays).toBe(7.5);
  });

  it.each([
    [
      'rotate_bytes = 10485760',
      'rotate_bytes = 1023',
      'audit.rotate_bytes must be a whole number of bytes from 1024 to 268435456',
    ],
    [
      'rotate_bytes = 10485760',
      'rotate_bytes = 2048.5',
      'audit.rotate_bytes must be a whole number of bytes from 1024 to 268435456',
    ],
    [
      'rotate_bytes = 10485760',
      'rotate_bytes = 268435457',
      'audit.rotate_bytes must be a whole number of bytes from 1024 to 268435456',
    ],
    ['keep_files = 10', 'keep_files = -1', 'audit.keep_files must be a whole number from 0 to 1000'],
    ['keep_files = 10', 'keep_files = "10"', 'audit.keep_files must be a whole number from 0 to 1000'],
    ['keep_hours = 24', 'keep_hours = -1', 'audit.keep_hours must be a number of hours from 0 to 8760'],
    ['keep_hours = 24', 'keep_hours = 8761', 'audit.keep_hours must be a number of hours from 0 to 8760'],
    ['keep_hours = 24', 'keep_hours = "24"', 'audit.keep_hours must be a number of hours from 0 to 8760'],
    ['keep_hours = 24', 'keep_hours = nan', 'audit.keep_hours must be a number of hours from 0 to 8760'],
    [
      'requests_days = 30',
      'requests_days = 0',
      'retention.requests_days must be a number of days from 0.001 to 36500',
    ],
    [
      'requests_days = 30',
      'requests_days = 0.0009',
      'retention.requests_days must be a number of days from 0.001 to 36500',
    ],
    [
      'requests_days = 30',
      'requests_days = "30"',
      'retention.requests_days must be a number of days from 0.001 to 36500',
    ],
    [
      'requests_days = 30',
      'requests_days = nan',
      'retention.requests_days must be a number of days from 0.001 to 36500',
    ],
    [
      'requests_days = 30',
      'requests_days = inf',
      'retention.requests_days must be a number of days from 0.001 to 36500',
    ],
    ...['max_requests = 99', 'max_requests = 100.5', 'max_requests = 10000001', 'max_requests = "10000"'].map(
      (to) => [
        'max_requests = 10000',
        to,
        'retention.max_requests must be a whole number from 100 to 10000000',
      ],
    ),
  ])('refuses %s changed to %s', (from, to, message) => {
    const text = withSetting(from, to);
    expect(() => parse(text)).toThrow(new ConfigError('config_invalid', message));
    expect(() => parse(text)).toThrow(expect.objectContaining({ code: 'config_invalid', message }));
  });

  it('refuses a misspelt setting in [retention], naming its line', () => {
    const text = withSetting('requests_days = 30', 'request_days = 30');
    const line = text.split('\n').indexOf('request_days = 30') + 1;
    expect(() => parse(text)).toThrow(
      expect.objectContaining({
        code: 'config_invalid',
        message: `config.toml line ${line}: unknown setting "retention.request_days"`,
      }),
    );
  });
});

describe('changing how long Latch keeps its history', () => {
  const approved = parse(template);
  /** The approved config with one setting of its template changed. */
  const changedTo = (from: string, to: string) => parse(template.replace(from, to));

  it.each([
    ['audit.rotate_bytes', 'rotate_bytes = ', 10_485_760, 20_971_520, 5_242_880],
    ['audit.keep_files', 'keep_files = ', 10, 20, 5],
    ['audit.keep_hours', 'keep_hours = ', 24, 48, 0],
    ['retention.requests_days', 'requests_days = ', 30, 90, 0.5],
    ['retention.max_requests', 'max_requests = ', 10_000, 100_000, 1000],
  ])('counts %s raised as a tightening, lowered as a loosening', (setting, key, from, more, less) => {
    expect(configChanges(approved, changedTo(`${key}${from}`, `${key}${more}`))).toEqual([
      { setting, from, to: more, tightens: true },
    ]);
    expect(configChanges(approved, changedTo(`${key}${from}`, `${key}${less}`))).toEqual([
      { setting, from, to: less, tightens: false },
    ]);
  });
});
