"""The hall's bus, shared by the table and the desk: what travels on it and the checks
every message passes (messages, pairing, result, tablestatus), the broker's address and
account (broker, account) and the hall's one use of the wall clock (timesync). Imports
neither the table nor the desk."""
