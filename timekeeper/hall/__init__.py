"""The hall wing: many boxes on one signal over MQTT, in three parts by audience —
bus/ (what travels on the bus and its checks, shared), table/ (what a box runs) and
desk/ (what the desk runs and serves); table and desk never import each other — and
practice.py, the whole hall on one machine (a private Mosquitto, boxes and a desk as
processes). Imports rules (and, for the desk's pages, web); never box."""
