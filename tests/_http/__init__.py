"""Tests of askkit._http, the HTTP JSON core the clients share."""
