import { roles, type Role } from '@/db/schema/states';

export { roles, type Role };

export function isRole(value: unknown): value is Role {
  return typeof value === 'string' && (roles as readonly string[]).includes(value);
}

export const roleLabels: Record<Role, string> = {
  support: 'Support',
  oncall: 'On-call',
  operator: 'Operator',
  manager: 'Manager',
  admin: 'Admin',
};
