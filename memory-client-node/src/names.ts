type Json = Record<string, any>;

/** `someName` -> `some_name`; snake_case stays as it is. */
export function snake(name: string): string {
  return name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
}

/** The object's own keys in snake_case (one level: values are sent as given), undefined values left out. */
export function snakeKeys(object: Json | undefined): Json {
  const out: Json = {};
  for (const [key, value] of Object.entries(object ?? {})) if (value !== undefined) out[snake(key)] = value;
  return out;
}

/** `some_name` -> `someName`. */
export function camel(name: string): string {
  return name.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());
}
