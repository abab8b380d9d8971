import { addDecimals } from '../src/usecases/usage/meter-events';

// The relay sums the decimal text of ledger entries (a meter's units, exact): never through floats.
describe('addDecimals (the meter-event relay sums exactly)', () => {
  it('adds whole and decimal texts exactly, as the shortest text', () => {
    expect(['0.1', '0.1', '0.1'].reduce(addDecimals, '0')).toBe('0.3');
    expect(addDecimals('1.25', '0.005')).toBe('1.255');
    expect(addDecimals('0.5', '0.5')).toBe('1');
    expect(addDecimals('0.25', '0.75')).toBe('1');
    expect(addDecimals('0.000001', '0')).toBe('0.000001');
    expect(addDecimals('999999999999.999999', '0.000001')).toBe('1000000000000');
    expect(addDecimals('7', '35')).toBe('42');
  });

  it('stays exact past what a double holds', () => {
    let total = '0';
    for (let i = 0; i < 20_000; i++) total = addDecimals(total, '999999999999.999999');
    expect(total).toBe('19999999999999999.98');
  });
});
