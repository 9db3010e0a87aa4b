import { describe, expect, it } from 'vitest';
import { isBreachedPassword, newPasswordProblem } from './password-policy';

describe('new passwords', () => {
  it('refuses the bundled list of breached passwords, in any case', () => {
    for (const leaked of ['qwerty123456', 'QWERTY123456', '1qaz2wsx3edc', 'password']) expect(isBreachedPassword(leaked)).toBe(true);
    expect(newPasswordProblem({ password: 'Qwerty123456', email: 'a@example.com' })).toMatch(/leaked/);
  });

  it('accepts a long password nobody leaked, and says why any other is refused', () => {
    expect(newPasswordProblem({ password: 'violet-harbour-tractor-91', email: 'a@example.com' })).toBeNull();
    expect(newPasswordProblem({ password: 'short-one', email: 'a@example.com' })).toMatch(/at least 12/);
    expect(newPasswordProblem({ password: 'someone@example.com', email: 'Someone@example.com' })).toMatch(/email/);
    expect(newPasswordProblem({ password: 'x'.repeat(1025), email: 'a@example.com' })).toMatch(/at most/);
  });
});
