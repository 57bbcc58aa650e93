"""`factledger-lab bench write`: the write path on loopback (issue 19).

Message appends and session ends, each on its own, by closed-loop clients against fresh
server processes; appends on subjects of 10, 1,000 and 10,000 events; and the cold start of
`factledger serve`. Every figure is printed with the load average it was taken under.
"""
