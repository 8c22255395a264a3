// The values of an organization's own key fields as the benchmarks send and seed them (bench:rules'
// fields part, bench:history's key fields part), so both measure the same cardinalities: a device
// hash of 32 hex digits, about one per customer (a twenty-fifth of customers share their
// neighbour's, a third use a second device for a quarter of their payments); an e-mail domain of
// 40, a few of them most customers'; a card's BIN country of 30, mostly the customer's own.

/** E-mail domains, the most common first (two of them throwaway domains, near the end). */
export const DOMAINS = [
  'gmail.com',
  'hotmail.com',
  'yahoo.com',
  'outlook.com',
  'icloud.com',
  'gmx.de',
  'web.de',
  'orange.fr',
  'free.fr',
  'libero.it',
  'sapo.pt',
  'live.com',
  'hotmail.fr',
  'yahoo.fr',
  'telefonica.net',
  'protonmail.com',
  't-online.de',
  'laposte.net',
  'virgilio.it',
  'aol.com',
  'mail.com',
  'yandex.ru',
  'mail.ru',
  'msn.com',
  'me.com',
  'tiscali.it',
  'wanadoo.fr',
  'sfr.fr',
  'alice.it',
  'gmx.net',
  'yahoo.es',
  'hotmail.es',
  'outlook.fr',
  'posteo.de',
  'tutanota.com',
  'fastmail.com',
  'zoho.com',
  'mailinator.com',
  'guerrillamail.com',
  'example-shop.eu',
];

/** Cards' issuing countries: those of the simulator's cities first (src/domain/simulate.ts). */
export const COUNTRIES = [
  'PT',
  'ES',
  'FR',
  'DE',
  'IT',
  'NL',
  'AT',
  'GB',
  'BE',
  'IE',
  'US',
  'CH',
  'PL',
  'SE',
  'DK',
  'NO',
  'FI',
  'CZ',
  'RO',
  'GR',
  'HU',
  'BR',
  'CA',
  'MX',
  'TR',
  'MA',
  'NG',
  'IN',
  'CN',
  'BY',
];

/** The country of each of the simulator's cities (CITIES' order: Lisbon, Porto, Madrid, …). */
export const CITY_COUNTRIES = ['PT', 'PT', 'ES', 'ES', 'FR', 'FR', 'DE', 'DE', 'IT', 'IT', 'NL', 'AT'];

/** One customer in this many shares its neighbour's device. */
export const SHARED_DEVICE_EVERY = 25;
