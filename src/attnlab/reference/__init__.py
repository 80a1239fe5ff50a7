"""attnlab.reference"""
