import { expect, it } from 'vitest';
import { ApiError } from '../api/errors.js';
import { retryOnConflict } from './retryonconflict.js';

const conflict = () => new ApiError('Conflict', 'the object has been modified');

it('sends again on a conflict until it goes through, and gives up after the attempts it was given', async () => {
  let calls = 0;
  await expect(
    retryOnConflict(3, async () => {
      if (++calls < 3) throw conflict();
      return 'written';
    }),
  ).resolves.toBe('written');
  expect(calls).toBe(3);

  calls = 0;
  await expect(
    retryOnConflict(2, async () => {
      calls++;
      throw conflict();
    }),
  ).rejects.toThrow('the object has been modified');
  expect(calls).toBe(2);
});

it('does not send again on any other error', async () => {
  let calls = 0;
  await expect(
    retryOnConflict(5, async () => {
      calls++;
      throw new ApiError('Invalid', 'spec.template: Required value');
    }),
  ).rejects.toThrow('Required value');
  expect(calls).toBe(1);
});
